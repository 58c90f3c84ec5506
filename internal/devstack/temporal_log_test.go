package devstack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"go.temporal.io/server/common/log/tag"
)

// The server's report of a workflow task refused by a stopped worker's
// closed sticky queue, and an operation stopped because its client
// cancelled the request (a stopping worker), are logged at info; other
// errors stay errors.
func TestServerLoggerClosedQueue(t *testing.T) {
	var buf bytes.Buffer
	l := newServerLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo,
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		}})), slog.LevelWarn, &fatalRecorder{})
	l.Error("service failures", tag.NewStringTag("operation", "AddWorkflowTask"), tag.Error(errors.New("task queue closed")))
	l.Error("service failures", tag.NewStringTag("operation", "AddWorkflowTask"), tag.Error(errors.New("persistence unavailable")))
	l.Error("Update workflow execution operation failed.", tag.NewStringTag("store-operation", "update-wf-execution"), tag.Error(fmt.Errorf("update: %w", context.Canceled)))
	l.Error("Persistent store operation failure", tag.Error(errors.New("context canceled")))
	want := `level=ERROR msg="service failures" operation=AddWorkflowTask error="persistence unavailable"` + "\n"
	if got := buf.String(); got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}
