//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/worker/runner"
)

// statusJSON is the documented, stable part of `status --output json`
// (docs/operating.md); list --output json is an array of the same.
type statusJSON struct {
	Table          string           `json:"table"`
	Topic          string           `json:"topic"`
	Phase          string           `json:"phase"`
	Paused         bool             `json:"paused"`
	Offsets        map[string]int64 `json:"offsets"`
	HighWatermarks map[string]int64 `json:"high_watermarks"`
	Lag            map[string]int64 `json:"lag"`
	TotalLag       int64            `json:"total_lag"`
	LagSource      string           `json:"lag_source"`
	BatchSeq       int64            `json:"batch_seq"`
	LastBatchAt    time.Time        `json:"last_batch_at"`
	LastError      string           `json:"last_error"`
	Totals         struct {
		Batches     int64 `json:"batches"`
		Records     int64 `json:"records"`
		Changes     int64 `json:"changes"`
		Applied     int64 `json:"applied"`
		Stale       int64 `json:"stale"`
		Duplicates  int64 `json:"duplicates"`
		Tombstones  int64 `json:"tombstones"`
		Quarantined int64 `json:"quarantined"`
	} `json:"totals"`
	LastBatch *struct {
		BatchID string `json:"batch_id"`
		Records int    `json:"records"`
	} `json:"last_batch"`
	Spec struct {
		Table      string   `json:"table"`
		Topic      string   `json:"topic"`
		KeyColumns []string `json:"key_columns"`
		MaxEvents  int      `json:"max_events"`
		MaxWait    int64    `json:"max_wait"` // nanoseconds
		Catalog    string   `json:"catalog"`
	} `json:"spec"`
}

// status --output json and list --output json print the documented fields
// with the table's exact state after the generated sample stream (134
// records, batches of 100); --json is the same; an unknown format is a
// usage error.
func TestStatusAndListJSON(t *testing.T) {
	st := testStack(t)
	args := namespace(t, st, "cli-json")
	s := st.Settings
	s.Namespace = "cli-json"
	r, err := runner.Start(context.Background(), s, slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})))
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	if code, _, stderr := cli(t, append([]string{"produce", "cli.public.json"}, args...)...); code != exitOK {
		t.Fatalf("produce: exit %d: %s", code, stderr)
	}
	if code, _, stderr := cli(t, append([]string{"start", "cli.public.json", "--table", "cli.json", "--key", "order_id", "--batch-size", "100", "--max-wait", "200ms", "--schedules=false"}, args...)...); code != exitOK {
		t.Fatalf("start: exit %d: %s", code, stderr)
	}
	defer func() {
		_ = r.Client.TerminateWorkflow(context.Background(), "lakemirror-table-cli.json", "", "test ends")
	}()
	if code, _, stderr := cli(t, append([]string{"wait", "cli.json", "--timeout", "1m"}, args...)...); code != exitOK {
		t.Fatalf("wait: exit %d: %s", code, stderr)
	}
	check := func(what string, got statusJSON) {
		t.Helper()
		if got.LastBatchAt.IsZero() || got.LastBatch == nil {
			t.Fatalf("%s: no last batch: %+v", what, got)
		}
		got.LastBatchAt = time.Time{}
		var want statusJSON
		want.Table, want.Topic, want.Phase = "cli.json", "cli.public.json", "stream"
		want.Offsets, want.HighWatermarks, want.Lag = map[string]int64{"0": 134}, map[string]int64{"0": 134}, map[string]int64{"0": 0}
		want.LagSource, want.BatchSeq = "kafka", 2
		want.Totals.Batches, want.Totals.Records, want.Totals.Changes, want.Totals.Applied = 2, 134, 121, 109
		want.Totals.Stale, want.Totals.Duplicates, want.Totals.Tombstones = 4, 8, 13
		want.LastBatch = got.LastBatch
		if got.LastBatch.BatchID != "cli.json#2" || got.LastBatch.Records != 34 {
			t.Errorf("%s: last batch %+v, want cli.json#2 with 34 records", what, *got.LastBatch)
		}
		want.Spec.Table, want.Spec.Topic, want.Spec.KeyColumns = "cli.json", "cli.public.json", []string{"order_id"}
		want.Spec.MaxEvents, want.Spec.MaxWait, want.Spec.Catalog = 100, int64(200*time.Millisecond), s.Catalog.Identity()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %+v\nwant %+v", what, got, want)
		}
	}
	for _, flag := range [][]string{{"--output", "json"}, {"-o", "json"}, {"--json"}} {
		code, stdout, stderr := cli(t, append(append([]string{"status", "cli.json"}, flag...), args...)...)
		if code != exitOK || stderr != "" {
			t.Fatalf("status %v: exit %d: %s", flag, code, stderr)
		}
		var got statusJSON
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("status %v: %v\n%s", flag, err, stdout)
		}
		check("status "+strings.Join(flag, " "), got)

		code, stdout, stderr = cli(t, append(append([]string{"list"}, flag...), args...)...)
		if code != exitOK || stderr != "" {
			t.Fatalf("list %v: exit %d: %s", flag, code, stderr)
		}
		var all []statusJSON
		if err := json.Unmarshal([]byte(stdout), &all); err != nil || len(all) != 1 {
			t.Fatalf("list %v: %v, %d tables\n%s", flag, err, len(all), stdout)
		}
		check("list "+strings.Join(flag, " "), all[0])
	}
	// wait --output json: the caught-up status object on stdout
	code, stdout, stderr := cli(t, append([]string{"wait", "cli.json", "--timeout", "1m", "--output", "json"}, args...)...)
	var waited statusJSON
	if code != exitOK {
		t.Fatalf("wait --output json: exit %d: %s", code, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), &waited); err != nil {
		t.Fatalf("wait --output json: %v\n%s", err, stdout)
	}
	check("wait --output json", waited)
	// settings --output json: the spec after the change (the same batch
	// size, so the checks above stay true)
	code, stdout, stderr = cli(t, append([]string{"settings", "cli.json", "--batch-size", "100", "--output", "json"}, args...)...)
	var spec statusJSON
	if code != exitOK {
		t.Fatalf("settings --output json: exit %d: %s", code, stderr)
	}
	if err := json.Unmarshal([]byte(stdout), &spec.Spec); err != nil {
		t.Fatalf("settings --output json: %v\n%s", err, stdout)
	}
	if spec.Spec.Table != "cli.json" || spec.Spec.Topic != "cli.public.json" || spec.Spec.MaxEvents != 100 || spec.Spec.MaxWait != int64(200*time.Millisecond) ||
		!reflect.DeepEqual(spec.Spec.KeyColumns, []string{"order_id"}) || spec.Spec.Catalog != s.Catalog.Identity() {
		t.Errorf("settings --output json: %+v\n%s", spec.Spec, stdout)
	}
	// settings without a setting to change: the settings in effect
	code, stdout, stderr = cli(t, append([]string{"settings", "cli.json"}, args...)...)
	if want := "cli.json: batches of at most 100 records, waiting at most 200ms; at most 100 quarantined records per batch\n" +
		"cli.json: layout bronze partitioned by day(_ingested_at)\n"; code != exitOK || stdout != want {
		t.Errorf("settings without a change: exit %d, stderr %q, stdout:\n%s\nwant:\n%s", code, stderr, stdout, want)
	}
	code, stdout, _ = cli(t, append([]string{"list"}, args...)...)
	lines := strings.Split(strings.TrimSpace(stdout), "\n")
	if code != exitOK || len(lines) != 2 || !strings.HasPrefix(lines[1], "cli.json  cli.public.json  stream  0    2        ") || !strings.HasSuffix(lines[1], " ago") {
		t.Errorf("list: exit %d:\n%s", code, stdout)
	}
	// a table that cannot catch up (its topic does not exist): wait gives up at --timeout
	if code, _, stderr := cli(t, append([]string{"start", "cli.public.never", "--table", "cli.never", "--schedules=false"}, args...)...); code != exitOK {
		t.Fatalf("start: exit %d: %s", code, stderr)
	}
	defer func() {
		_ = r.Client.TerminateWorkflow(context.Background(), "lakemirror-table-cli.never", "", "test ends")
	}()
	code, _, stderr = cli(t, append([]string{"wait", "cli.never", "--timeout", "3s"}, args...)...)
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); code != exitFailure || lines[len(lines)-1] != "starter: cli.never did not catch up within --timeout 3s: phase stream, lag 0 records" {
		t.Errorf("wait --timeout: exit %d, stderr %q", code, stderr)
	}
	for _, cmd := range [][]string{{"status", "cli.json"}, {"list"}} {
		if code, _, stderr := cli(t, append(append(cmd, "--output", "yaml"), args...)...); code != exitUsage || stderr != "starter: --output \"yaml\": give text or json\n" {
			t.Errorf("%v --output yaml: exit %d, %q", cmd, code, stderr)
		}
	}
}
