//go:build e2e

package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"testing"

	"github.com/lakemirror/lakemirror/internal/buildinfo"
	"github.com/lakemirror/lakemirror/worker/runner"
)

// A worker that died stays listed as a poller for a while; a status
// query then gets no answer, and status says which workers did not answer
// instead of "context deadline exceeded". The worker's connection closes
// before it stops, so it cannot tell the server (as after a kill -9): a
// worker stopped gracefully tells it (the SDK's ShutdownWorker, with the
// dev server's frontend.enableCancelWorkerPollsOnShutdown), is no longer
// listed, and status says that no worker polls the queue.
func TestStatusQueryUnanswered(t *testing.T) {
	st := testStack(t)
	args := namespace(t, st, "cli-gone")
	s := st.Settings
	s.Namespace = "cli-gone"
	r, err := runner.Start(context.Background(), s, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		t.Fatal(err)
	}
	code, _, stderr := cli(t, append([]string{"start", "cli.gone.topic", "--table", "cli.gone", "--schedules=false"}, args...)...)
	if code != exitOK {
		t.Fatalf("start: exit %d, %s", code, stderr)
	}
	waitUntil(t, "status answers", func() bool {
		code, _, _ := cli(t, append([]string{"status", "cli.gone"}, args...)...)
		return code == exitOK
	})
	r.Client.Close()
	r.Stop()
	code, stdout, stderr := cli(t, append([]string{"status", "cli.gone"}, args...)...)
	id := regexp.QuoteMeta(runner.Identity(buildinfo.Get().Short(), s.Catalog.Identity()) + " worker/" + r.WorkerID)
	want := regexp.MustCompile(fmt.Sprintf(`^starter: the status query of cli\.gone got no answer in \d+s from the workers polling task queue "lakemirror": %s \(last polled \d+s ago\); they may be stopped \(Temporal lists a stopped worker for a few minutes\), overloaded or stuck: check their logs\n$`, id))
	if code != exitFailure || stdout != "" || !want.MatchString(stderr) {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 1 and %s", code, stdout, stderr, want)
	}
}
