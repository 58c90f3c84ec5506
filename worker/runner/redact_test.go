package runner

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
)

// The secret of these tests: a catalog property the worker is given, and
// an error text that quotes it and an Azure SAS URL (as Go's net/http
// does for a failed request).
const (
	redactSecret = "hunter2-secret-value"
	leakyError   = `upload failed: Put "http://127.0.0.1:1/acct/lake/wh%2Ff?se=2030&sig=c2lnbmF0dXJl%3D&sv=2024": secret ` + redactSecret
	leakRedacted = `upload failed: Put "http://127.0.0.1:1/acct/lake/wh%2Ff?se=2030&sig=REDACTED&sv=2024": secret REDACTED`
)

// Activity errors leave the worker redacted: an ApplicationError keeps
// its type and retry flag, any other error becomes its redacted text,
// with no cause that would still hold the secret; clean errors pass
// through untouched.
func TestRedactActivityError(t *testing.T) {
	redact := func(s string) string {
		return lakecat.RedactText(map[string]string{"s3.secret-access-key": redactSecret}, s)
	}
	plain := redactActivityError(fmt.Errorf("lake: %w", errors.New(leakyError)), redact)
	var pe *temporal.ApplicationError
	if !errors.As(plain, &pe) || pe.Message() != "lake: "+leakRedacted || pe.Type() != "wrapError" || pe.NonRetryable() || pe.Unwrap() != nil {
		t.Errorf("plain: %q (cause %v)", plain, errors.Unwrap(plain))
	}
	app := redactActivityError(temporal.NewNonRetryableApplicationError(leakyError, "StorageError", errors.New(leakyError)), redact)
	var ae *temporal.ApplicationError
	if !errors.As(app, &ae) || ae.Message() != leakRedacted || ae.Type() != "StorageError" || !ae.NonRetryable() || ae.Unwrap() != nil {
		t.Errorf("application error: %v", app)
	}
	clean := temporal.NewApplicationError("schema blocked", activities.ErrTypeSchemaBlocked, []string{"details kept"})
	if got := redactActivityError(clean, redact); got != clean {
		t.Errorf("a clean error was replaced: %v", got)
	}
}

// The worker's log records are redacted: message, string and error
// attributes, in groups and in attributes bound with With.
func TestRedactHandler(t *testing.T) {
	var buf bytes.Buffer
	redact := func(s string) string {
		return lakecat.RedactText(map[string]string{"s3.secret-access-key": redactSecret}, s)
	}
	l := redactLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}})), redact)
	l.With("key", redactSecret).Warn("write failed: "+redactSecret, "error", errors.New(leakyError), slog.Group("g", "s", redactSecret, "n", 3))
	want := `level=WARN msg="write failed: REDACTED" key=REDACTED error="` + strings.ReplaceAll(leakRedacted, `"`, `\"`) + `" g.s=REDACTED g.n=3` + "\n"
	if buf.String() != want {
		t.Fatalf("logged\n%s\nwant\n%s", buf.String(), want)
	}
}
