package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"go.temporal.io/api/serviceerror"
)

// On a graceful stop the SDK's failed heartbeat flushes (a cancelled
// context) are logged at DEBUG, and a heartbeat of an activity whose run
// has ended at INFO with a note; before the stop, and for any other error
// or message, records pass unchanged.
func TestQuietOnStop(t *testing.T) {
	var buf bytes.Buffer
	stopping := new(atomic.Bool)
	l := quietOnStop(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		Level: slog.LevelInfo,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}})), stopping).With("ActivityType", "PlanBatch")
	canceled := fmt.Errorf("rpc: %w", context.Canceled)
	l.Warn(heartbeatFlushMsg, "Error", canceled)
	stopping.Store(true)
	l.Warn(heartbeatFlushMsg, "Error", canceled)
	l.Warn(heartbeatFlushMsg, "Error", "context canceled")
	l.Warn(heartbeatFlushMsg, "Error", errors.New("deadline exceeded"))
	l.Warn("another warning", "Error", context.Canceled)
	l.Warn(heartbeatFlushMsg, "Error", serviceerror.NewNotFound("workflow execution already completed"))
	l.Warn(heartbeatFlushMsg, "Error", serviceerror.NewNotFound("namespace not found"))
	want := `level=WARN msg="RecordActivityHeartbeat with error" ActivityType=PlanBatch Error="rpc: context canceled"
level=WARN msg="RecordActivityHeartbeat with error" ActivityType=PlanBatch Error="deadline exceeded"
level=WARN msg="another warning" ActivityType=PlanBatch Error="context canceled"
level=INFO msg="RecordActivityHeartbeat with error" ActivityType=PlanBatch Error="workflow execution already completed" note="the activity's workflow run ended while it ran (a stop, a drop or a new run): it is cancelled and its result is not used"
level=WARN msg="RecordActivityHeartbeat with error" ActivityType=PlanBatch Error="namespace not found"
`
	if got := buf.String(); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
	buf.Reset()
	debug := quietOnStop(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})), stopping)
	debug.Warn(heartbeatFlushMsg, "Error", context.Canceled)
	if got := buf.String(); !strings.Contains(got, `level=DEBUG msg="RecordActivityHeartbeat with error" Error="context canceled"`) {
		t.Fatalf("at debug: %s", got)
	}
}
