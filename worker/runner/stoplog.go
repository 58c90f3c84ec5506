package runner

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"

	"go.temporal.io/api/serviceerror"
)

// heartbeatFlushMsg is the Temporal Go SDK's warning when a heartbeat it
// buffered (heartbeats are batched per throttle interval) fails to send.
// On a graceful stop the SDK flushes the buffer of every running
// activity (an idle table's plan, which returns with Leaving) with the
// activity's context, already cancelled: one warning per idle table, for
// a heartbeat that no longer matters.
const heartbeatFlushMsg = "RecordActivityHeartbeat with error"

// stopQuietHandler adjusts two of the SDK's heartbeatFlushMsg warnings
// that are expected outcomes, not faults; every other record passes
// unchanged:
//   - once stopping is set (Runner.Stop), one whose error is a cancelled
//     context is logged at DEBUG;
//   - one whose error is the server's NotFound "workflow execution already
//     completed" is logged at INFO with a note: the activity's run ended
//     while it ran (a stop, a drop, or a new run after a settings update,
//     whose cancellation of an idle plan the server no longer delivers);
//     the SDK cancels the activity, whose result no run waits for.
type stopQuietHandler struct {
	h        slog.Handler
	stopping *atomic.Bool
}

// quietOnStop returns l wrapped in a stopQuietHandler reading stopping;
// nil stays nil.
func quietOnStop(l *slog.Logger, stopping *atomic.Bool) *slog.Logger {
	if l == nil {
		return nil
	}
	return slog.New(&stopQuietHandler{h: l.Handler(), stopping: stopping})
}

func (s *stopQuietHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return s.h.Enabled(ctx, l)
}

func (s *stopQuietHandler) Handle(ctx context.Context, rec slog.Record) error {
	if rec.Level != slog.LevelWarn || rec.Message != heartbeatFlushMsg {
		return s.h.Handle(ctx, rec)
	}
	switch {
	case s.stopping.Load() && cancelled(rec):
		if !s.h.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		rec = rec.Clone()
		rec.Level = slog.LevelDebug
	case runEnded(rec):
		if !s.h.Enabled(ctx, slog.LevelInfo) {
			return nil
		}
		rec = rec.Clone()
		rec.Level = slog.LevelInfo
		rec.AddAttrs(slog.String("note", "the activity's workflow run ended while it ran (a stop, a drop or a new run): it is cancelled and its result is not used"))
	}
	return s.h.Handle(ctx, rec)
}

// runEnded reports whether rec's "Error" attribute is the server's
// NotFound for an activity whose workflow run has completed.
func runEnded(rec slog.Record) bool {
	var nf *serviceerror.NotFound
	err, ok := errorAttr(rec).(error)
	return ok && errors.As(err, &nf) && strings.Contains(nf.Error(), "workflow execution already completed")
}

func (s *stopQuietHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &stopQuietHandler{h: s.h.WithAttrs(as), stopping: s.stopping}
}

func (s *stopQuietHandler) WithGroup(name string) slog.Handler {
	return &stopQuietHandler{h: s.h.WithGroup(name), stopping: s.stopping}
}

// cancelled reports whether rec's "Error" attribute (the SDK's error tag)
// is a cancelled context.
func cancelled(rec slog.Record) bool {
	switch v := errorAttr(rec).(type) {
	case error:
		return errors.Is(v, context.Canceled) || v.Error() == context.Canceled.Error()
	case string:
		return v == context.Canceled.Error()
	}
	return false
}

// errorAttr is the value of rec's "Error" attribute (the SDK's error tag),
// nil when it has none.
func errorAttr(rec slog.Record) any {
	var v any
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key != "Error" {
			return true
		}
		v = a.Value.Any()
		return false
	})
	return v
}
