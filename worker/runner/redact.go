package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"reflect"

	"go.temporal.io/sdk/interceptor"
	"go.temporal.io/sdk/temporal"
)

// The worker's two ways out for a credential that a storage or catalog
// client quotes in an error (Go's net/http quotes a failed request's URL,
// an Azure SAS token in its query): activity errors, which Temporal
// records in workflow histories and the table's status shows, and log
// records. Both are redacted with the catalog settings' Redact
// (lakecat.RedactText).

// redactInterceptor redacts the errors of every activity the worker runs.
type redactInterceptor struct {
	interceptor.WorkerInterceptorBase
	redact func(string) string
}

func (r *redactInterceptor) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	i := &redactActivity{redact: r.redact}
	i.Next = next
	return i
}

type redactActivity struct {
	interceptor.ActivityInboundInterceptorBase
	redact func(string) string
}

func (a *redactActivity) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	res, err := a.Next.ExecuteActivity(ctx, in)
	return res, redactActivityError(err, a.redact)
}

// redactActivityError returns err when redact leaves its text unchanged.
// Otherwise it returns an ApplicationError with the redacted text and
// neither cause nor details, since Temporal records an error's whole
// cause chain, each cause's own text: for an ApplicationError its type,
// retry flag, delay and category kept; for any other error (retryable)
// the type name Temporal would have recorded for it (its Go type's name,
// e.g. "wrapError"; none for errors.New's), so the table's status reads
// as without redaction.
func redactActivityError(err error, redact func(string) string) error {
	if err == nil || redact(err.Error()) == err.Error() {
		return err
	}
	var app *temporal.ApplicationError
	if errors.As(err, &app) && app == err {
		return temporal.NewApplicationErrorWithOptions(redact(app.Message()), app.Type(), temporal.ApplicationErrorOptions{
			NonRetryable: app.NonRetryable(), NextRetryDelay: app.NextRetryDelay(), Category: app.Category()})
	}
	t := reflect.TypeOf(err)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	typ := t.Name()
	if typ == "errorString" { // errors.New's: Temporal records no type for it
		typ = ""
	}
	return temporal.NewApplicationError(redact(err.Error()), typ)
}

// redactHandler is a slog.Handler that redacts every record's message
// and its string, error and fmt.Stringer attribute values (in groups
// too) before passing it to h.
type redactHandler struct {
	h      slog.Handler
	redact func(string) string
}

// redactLogger returns l writing through a redactHandler; nil stays nil.
func redactLogger(l *slog.Logger, redact func(string) string) *slog.Logger {
	if l == nil {
		return nil
	}
	return slog.New(&redactHandler{h: l.Handler(), redact: redact})
}

func (r *redactHandler) Enabled(ctx context.Context, l slog.Level) bool { return r.h.Enabled(ctx, l) }

func (r *redactHandler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, r.redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(r.attr(a))
		return true
	})
	return r.h.Handle(ctx, out)
}

func (r *redactHandler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = r.attr(a)
	}
	return &redactHandler{h: r.h.WithAttrs(red), redact: r.redact}
}

func (r *redactHandler) WithGroup(name string) slog.Handler {
	return &redactHandler{h: r.h.WithGroup(name), redact: r.redact}
}

func (r *redactHandler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, r.redact(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, ga := range g {
			red[i] = r.attr(ga)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			if s := x.Error(); r.redact(s) != s {
				return slog.String(a.Key, r.redact(s))
			}
		case fmt.Stringer:
			if s := x.String(); r.redact(s) != s {
				return slog.String(a.Key, r.redact(s))
			}
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
