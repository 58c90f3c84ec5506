package devstack

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"go.temporal.io/server/common/log"
	"go.temporal.io/server/common/log/tag"
)

// parseLogLevel maps "debug", "info", "warn"/"warning" and "error" (any case)
// to a slog level; "" means "error".
func parseLogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "error":
		return slog.LevelError, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "info":
		return slog.LevelInfo, nil
	case "debug":
		return slog.LevelDebug, nil
	}
	return 0, fmt.Errorf("devstack: unknown log level %q (want debug, info, warn or error)", s)
}

// minLevelHandler drops records below min before they reach h.
type minLevelHandler struct {
	h   slog.Handler
	min slog.Level
}

func (m minLevelHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= m.min && m.h.Enabled(ctx, l)
}
func (m minLevelHandler) Handle(ctx context.Context, r slog.Record) error { return m.h.Handle(ctx, r) }
func (m minLevelHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return minLevelHandler{h: m.h.WithAttrs(as), min: m.min}
}
func (m minLevelHandler) WithGroup(name string) slog.Handler {
	return minLevelHandler{h: m.h.WithGroup(name), min: m.min}
}

// fatalRecorder keeps the first message the server logged at Fatal level.
type fatalRecorder struct {
	mu  sync.Mutex
	msg string
}

func (f *fatalRecorder) record(msg string, tags []tag.Tag) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.msg != "" {
		return
	}
	var b strings.Builder
	b.WriteString(msg)
	for _, t := range tags {
		fmt.Fprintf(&b, " %s=%v", t.Key(), t.Value())
	}
	f.msg = b.String()
}

func (f *fatalRecorder) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.msg == "" {
		return nil
	}
	return fmt.Errorf("devstack: temporal server reported a fatal error: %s", f.msg)
}

// serverLogger adapts an *slog.Logger to the Temporal server's log.Logger.
//
// DPanic, Panic and Fatal are logged at error level and never panic or exit
// (the same choice temporaltest makes with its no-op logger): an embedded
// server must not terminate the host process. Fatal messages are also
// recorded so StartTemporal can report them.
type serverLogger struct {
	sl    *slog.Logger // never nil; a discard logger when output is dropped
	fatal *fatalRecorder
}

var (
	_ log.Logger      = (*serverLogger)(nil)
	_ log.WithLogger  = (*serverLogger)(nil)
	_ log.SLogWrapper = (*serverLogger)(nil)
)

// newServerLogger returns a server logger writing to base at level min and
// above; base == nil drops everything (fatal messages are still recorded).
func newServerLogger(base *slog.Logger, min slog.Level, fatal *fatalRecorder) *serverLogger {
	if base == nil {
		return &serverLogger{sl: slog.New(slog.DiscardHandler), fatal: fatal}
	}
	return &serverLogger{sl: slog.New(minLevelHandler{h: base.Handler(), min: min}), fatal: fatal}
}

func (l *serverLogger) emit(level slog.Level, msg string, tags []tag.Tag) {
	ctx := context.Background()
	if !l.sl.Enabled(ctx, level) {
		return
	}
	l.sl.LogAttrs(ctx, level, msg, tagsToAttrs(tags)...)
}

func tagsToAttrs(tags []tag.Tag) []slog.Attr {
	attrs := make([]slog.Attr, 0, len(tags))
	for _, t := range tags {
		attrs = append(attrs, slog.Any(t.Key(), t.Value()))
	}
	return attrs
}

func (l *serverLogger) Debug(msg string, tags ...tag.Tag) { l.emit(slog.LevelDebug, msg, tags) }
func (l *serverLogger) Info(msg string, tags ...tag.Tag)  { l.emit(slog.LevelInfo, msg, tags) }
func (l *serverLogger) Warn(msg string, tags ...tag.Tag)  { l.emit(slog.LevelWarn, msg, tags) }
func (l *serverLogger) Error(msg string, tags ...tag.Tag) {
	if queueClosed(msg, tags) || requestCanceled(tags) {
		l.emit(slog.LevelInfo, msg, tags)
		return
	}
	l.emit(slog.LevelError, msg, tags)
}

// requestCanceled reports whether an error record's error is a cancelled
// context: the client cancelled its request (a worker stopping cancels
// its polls and its in-flight responses), so the server's operation for
// it stopped ("Update workflow execution operation failed", "Persistent
// store operation failure" with error "context canceled"). Nothing is
// lost: the request is the client's to retry. It is logged at info.
func requestCanceled(tags []tag.Tag) bool {
	text, err, ok := errorTag(tags)
	return ok && (errors.Is(err, context.Canceled) || canceledText(text))
}

// errorTag returns a record's "error" tag: its text and the error (nil
// when the tag holds text); ok is false when there is none.
func errorTag(tags []tag.Tag) (text string, err error, ok bool) {
	for _, t := range tags {
		if t.Key() != "error" {
			continue
		}
		switch v := t.Value().(type) {
		case error:
			return v.Error(), v, true
		case string:
			return v, nil, true
		}
	}
	return "", nil, false
}

// canceledText reports whether an error's text is, or ends with, a
// cancelled context's.
func canceledText(s string) bool {
	c := context.Canceled.Error()
	return s == c || strings.HasSuffix(s, ": "+c)
}

// queueClosed reports whether an error record is the server's report that
// a workflow task could not be added to a task queue that its worker
// closed ("service failures" with the error "task queue closed"): the
// sticky queue of a worker that stopped; the server then schedules the
// task on the workflow's normal queue. A worker's graceful stop makes one
// per table it held, which is expected, so it is logged at info.
func queueClosed(msg string, tags []tag.Tag) bool {
	text, _, ok := errorTag(tags)
	return ok && msg == "service failures" && text == "task queue closed"
}

func (l *serverLogger) DPanic(msg string, tags ...tag.Tag) { l.emit(slog.LevelError, msg, tags) }
func (l *serverLogger) Panic(msg string, tags ...tag.Tag)  { l.emit(slog.LevelError, msg, tags) }
func (l *serverLogger) Fatal(msg string, tags ...tag.Tag) {
	l.fatal.record(msg, tags)
	l.emit(slog.LevelError, msg, tags)
}

// With returns a logger that prepends tags to every record.
func (l *serverLogger) With(tags ...tag.Tag) log.Logger {
	if len(tags) == 0 || !l.sl.Enabled(context.Background(), slog.LevelError) {
		return l // nothing would be written: skip encoding the tags
	}
	args := make([]any, 0, len(tags))
	for _, a := range tagsToAttrs(tags) {
		args = append(args, a)
	}
	return &serverLogger{sl: l.sl.With(args...), fatal: l.fatal}
}

// SLog returns the underlying (level-filtered) slog logger; the server uses
// it for components that log through slog directly.
func (l *serverLogger) SLog() *slog.Logger { return l.sl }
