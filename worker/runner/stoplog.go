package runner

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
)

// heartbeatFlushMsg is the Temporal Go SDK's warning when a heartbeat it
// buffered (heartbeats are batched per throttle interval) fails to send.
// On a graceful stop the SDK flushes the buffer of every running
// activity (an idle table's plan, which returns with Leaving) with the
// activity's context, already cancelled: one warning per idle table, for
// a heartbeat that no longer matters.
const heartbeatFlushMsg = "RecordActivityHeartbeat with error"

// stopQuietHandler logs, once stopping is set (Runner.Stop), the SDK's
// heartbeatFlushMsg warnings whose error is a cancelled context at DEBUG
// instead of WARN; every other record passes unchanged.
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
	if rec.Level == slog.LevelWarn && rec.Message == heartbeatFlushMsg && s.stopping.Load() && cancelled(rec) {
		if !s.h.Enabled(ctx, slog.LevelDebug) {
			return nil
		}
		rec = rec.Clone()
		rec.Level = slog.LevelDebug
	}
	return s.h.Handle(ctx, rec)
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
	found := false
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key != "Error" {
			return true
		}
		switch v := a.Value.Any().(type) {
		case error:
			found = errors.Is(v, context.Canceled) || v.Error() == context.Canceled.Error()
		case string:
			found = v == context.Canceled.Error()
		}
		return false
	})
	return found
}
