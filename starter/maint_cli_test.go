//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/worker/runner"
)

// maintain purge --dry-run counts what the purge would remove and
// removes nothing; the purge then removes exactly that; both print one
// line for people by default and the job's result with --output json;
// --dry-run on another job is a usage error; compaction prints a line per
// table.
func TestMaintainPurgeDryRun(t *testing.T) {
	st := testStack(t)
	args := namespace(t, st, "cli-maint")
	s := st.Settings
	s.Namespace = "cli-maint"
	r, err := runner.Start(context.Background(), s, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	run := func(want int, cmd ...string) string {
		t.Helper()
		code, stdout, stderr := cli(t, append(cmd, args...)...)
		if code != want {
			t.Fatalf("%v: exit %d, want %d: %s", cmd, code, want, stderr)
		}
		return stdout + stderr
	}
	run(exitOK, "produce", "cli.public.maint")
	run(exitOK, "start", "cli.public.maint", "--table", "cli.maint", "--key", "order_id", "--batch-size", "100", "--schedules=false")
	defer func() {
		_ = r.Client.TerminateWorkflow(context.Background(), "lakemirror-table-cli.maint", "", "test ends")
	}()
	run(exitOK, "wait", "cli.maint", "--timeout", "1m")
	rows := func() (all, deleted int) {
		out := run(exitOK, "dump", "cli.maint")
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			all++
			if strings.Contains(l, `"_is_deleted":true`) {
				deleted++
			}
		}
		return all, deleted
	}
	if all, deleted := rows(); all != 43 || deleted != 13 {
		t.Fatalf("mirror: %d rows, %d deleted; want 43, 13", all, deleted)
	}

	// the sample's deletes are from January 2026: all older than 30 days
	var dry activities.MaintenanceResult
	if err := json.Unmarshal([]byte(run(exitOK, "maintain", "cli.maint", "purge", "--dry-run", "--output", "json")), &dry); err != nil {
		t.Fatal(err)
	}
	p := dry.Purge
	if dry.Job != "purge" || p == nil || !p.DryRun || p.Deleted != 13 || p.Purged != 13 || len(p.Horizon) != 32 || p.SnapshotID != 0 {
		t.Fatalf("dry run: %+v %+v", dry, p)
	}
	text := run(exitOK, "maintain", "cli.maint", "purge", "--dry-run")
	want := regexp.MustCompile(fmt.Sprintf(`^purge of cli\.maint \(dry run, nothing was written\): would remove 13 of 13 soft-deleted rows \(deleted before 20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ\); the purge horizon would be %s\n$`, p.Horizon))
	if !want.MatchString(text) {
		t.Fatalf("dry run text: %q, want %s", text, want)
	}
	if all, deleted := rows(); all != 43 || deleted != 13 {
		t.Fatalf("after the dry run the mirror has %d rows, %d deleted; want 43, 13 (nothing removed)", all, deleted)
	}
	text = run(exitOK, "maintain", "cli.maint", "purge")
	want = regexp.MustCompile(fmt.Sprintf(`^purge of cli\.maint: removed 13 of 13 soft-deleted rows \(deleted before 20\d\d-\d\d-\d\dT\d\d:\d\d:\d\dZ\); purge horizon %s; mirror snapshot \d+\n$`, p.Horizon))
	if !want.MatchString(text) {
		t.Fatalf("purge text: %q, want %s", text, want)
	}
	if all, deleted := rows(); all != 30 || deleted != 0 {
		t.Fatalf("after the purge the mirror has %d rows, %d deleted; want 30, 0", all, deleted)
	}
	if out := run(exitOK, "maintain", "cli.maint", "purge", "--dry-run"); !strings.Contains(out, ": would remove 0 of 0 soft-deleted rows") {
		t.Fatalf("a second dry run: %q", out)
	}
	if out := run(exitUsage, "maintain", "cli.maint", "compact", "--dry-run"); out != "starter: --dry-run is for purge: compact has no dry run\n" {
		t.Fatalf("compact --dry-run: %q", out)
	}
	text = run(exitOK, "maintain", "cli.maint", "compact")
	want = regexp.MustCompile(`^compaction of cli\.maint:\n(  (bronze|mirror|history): rewrote \d+ of \d+ data files into \d+, dropped \d+ of \d+ position-delete files, [\d.]+ [KM]iB -> [\d.]+ [KM]iB\n){3}$`)
	if !want.MatchString(text) || !strings.Contains(text, "  mirror: rewrote ") {
		t.Fatalf("compact text: %q", text)
	}
}
