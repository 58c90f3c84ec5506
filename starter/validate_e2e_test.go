//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/validation"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/internal/telemetry"
	"github.com/lakemirror/lakemirror/internal/validate"
)

// `starter validate` through the real ValidationWorkflow on the embedded
// stack: a clean table passes every check (exit 0, one row per check in
// <ns>.<table>_validation); after a duplicate create reaches the topic,
// the transitions check alone fails, naming the key (exit 1); `schedule
// --validate-every` puts it on a Temporal Schedule whose run writes rows too.
func TestValidateCommand(t *testing.T) {
	s := startStack(t)
	ctx := context.Background()
	const topic, table = "val.public.orders", "val.orders"
	if err := s.r.Kafka.CreateTopic(ctx, topic, 1); err != nil {
		t.Fatal(err)
	}
	pg := sample.PostgresChange
	order := func(id int, status string) string { return fmt.Sprintf(`{"order_id":%d,"status":%q}`, id, status) }
	produce := func(msgs ...sample.Message) {
		t.Helper()
		for _, m := range msgs {
			if err := s.r.Kafka.Produce(ctx, &kgo.Record{Topic: topic, Value: m.Value}); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce(pg("c", "null", order(1, "new"), 100), pg("c", "null", order(2, "new"), 110),
		pg("u", order(1, "new"), order(1, "paid"), 120), pg("d", order(2, "new"), "null", 130))
	if out, errw, code := s.cli("start", topic, "--table", table, "--key", "order_id", "--batch-size", "2", "--schedules=false"); code != exitOK {
		t.Fatalf("start: exit %d\n%s%s", code, out, errw)
	}
	caughtUp := func(end int64) {
		t.Helper()
		waitFor(t, time.Minute, fmt.Sprintf("%s at offset %d", table, end), func() bool {
			st := statusOf(t, s.r.Client, table)
			return st.Offsets[0] == end && st.LastBatch != nil
		})
	}
	caughtUp(4)

	out, errw, code := s.cli("validate", table, "--output", "json")
	if code != exitOK {
		t.Fatalf("validate on a clean table: exit %d\n%s%s", code, out, errw)
	}
	var res activities.ValidationResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	seq := func(lsn uint64) string { return cdc.SeqOf(lsn, lsn).Hex() }
	var got []string
	for _, c := range res.Checks {
		got = append(got, c.Check+" "+c.Verdict)
	}
	if strings.Join(got, ", ") != "partitioning pass, transitions pass, continuity pass, watermark pass, replay pass, reapply pass" || res.Failed != 0 ||
		res.SourceWatermark != seq(130) || res.EventTimeWatermark.UnixMilli() != 1767258000000+130 ||
		!strings.HasPrefix(res.RunID, "lakemirror-validate-val.orders-") {
		t.Fatalf("clean run: %+v", res)
	}
	name, _ := lake.ParseTableName(table)
	tbl, err := lake.LoadTable(ctx, s.r.Catalog, name.Validation())
	if err != nil || tbl == nil {
		t.Fatalf("validation table: %v", err)
	}
	rows, _, err := lake.ReadRows(ctx, tbl, nil)
	if err != nil || len(rows) != 6 {
		t.Fatalf("validation rows: %d, %v", len(rows), err)
	}

	// a second create of key 1 without a delete between
	produce(pg("c", "null", order(1, "again"), 140))
	caughtUp(5)
	out, errw, code = s.cli("validate", table)
	// the key as col=value, not its encoding's hex (issue 35)
	finding := fmt.Sprintf("key order_id=1: create after an update without a delete between (u at %s, partition 0 offset 2; then c at %s, partition 0 offset 4)", seq(120), seq(140))
	if code != exitFailure || !strings.Contains(out, "FAIL transitions  1 key with an illegal transition; 5 events of 2 keys, 0 truncates\n       "+finding+"\n") ||
		!strings.Contains(out, "PASS partitioning") || !strings.Contains(out, "PASS continuity") || !strings.Contains(out, "PASS watermark") || !strings.Contains(out, "PASS replay") ||
		!strings.Contains(out, "PASS reapply") || !strings.Contains(errw, "1 of 6 checks failed") {
		t.Fatalf("validate after a duplicate create: exit %d\n%s%s", code, out, errw)
	}
	if rows, _, err = lake.ReadRows(ctx, mustLoad(t, s, name), []string{validation.ValRunID, validation.ValCheck}); err != nil || len(rows) != 12 {
		t.Fatalf("validation rows after two runs: %d, %v", len(rows), err)
	}
	fails := 0
	for _, r := range rows {
		if r[validation.ValVerdict] == validate.Fail {
			fails++
			if r[validation.ValCheck] != validate.CheckTransitions || r[validation.ValDetails] != finding {
				t.Fatalf("failing row %v", r)
			}
		}
	}
	if fails != 1 {
		t.Fatalf("%d failing rows, want 1", fails)
	}
	// status shows the last validation run, its failing check with what it observed
	out, errw, code = s.cli("status", table)
	if code != exitOK || !regexp.MustCompile(`\nlast validation +\S+: 6 checks, 1 failed: transitions \(1 key with an illegal transition\)\n`).MatchString(out) ||
		strings.Contains(out, "last reconciliation") {
		t.Fatalf("status: exit %d\n%s%s", code, out, errw)
	}
	// the worker's gauges: the last run's verdict per check
	fams, err := s.r.Metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var gauges []string
	for _, f := range fams {
		if f.GetName() != telemetry.MetricValFailed {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			gauges = append(gauges, fmt.Sprintf("%s %s %g", labels["table"], labels["check"], m.GetGauge().GetValue()))
		}
	}
	slices.Sort(gauges)
	if want := "val.orders continuity 0, val.orders partitioning 0, val.orders reapply 0, val.orders replay 0, val.orders transitions 1, val.orders watermark 0"; strings.Join(gauges, ", ") != want {
		t.Fatalf("%s: %q, want %q", telemetry.MetricValFailed, gauges, want)
	}

	// on a schedule: `schedule --validate-every` creates it (and leaves the
	// maintenance schedules alone); a triggered run writes its six rows
	out, errw, code = s.cli("schedule", table, "--validate-every", "1h")
	if code != exitOK || out != "schedule lakemirror-validate-val.orders: validate every 1h0m0s\n" {
		t.Fatalf("schedule --validate-every: exit %d\n%s%s", code, out, errw)
	}
	h := s.r.Client.ScheduleClient().GetHandle(ctx, "lakemirror-validate-val.orders")
	if err := h.Trigger(ctx, client.ScheduleTriggerOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "the scheduled validation run", func() bool {
		d, err := h.Describe(ctx)
		return err == nil && d.Info.NumActions == 1 && len(d.Info.RunningWorkflows) == 0
	})
	if rows, _, err = lake.ReadRows(ctx, mustLoad(t, s, name), nil); err != nil || len(rows) != 18 {
		t.Fatalf("validation rows after the scheduled run: %d, %v", len(rows), err)
	}
	out, errw, code = s.cli("schedule", table, "--delete")
	if code != exitOK || out != "deleted schedule lakemirror-validate-val.orders\n" {
		t.Fatalf("schedule --delete: exit %d\n%s%s", code, out, errw)
	}
	if _, errw, code := s.cli("validate", table, "--output", "yaml"); code != exitUsage {
		t.Fatalf("--output yaml: exit %d %s", code, errw)
	}
}

func mustLoad(t *testing.T, s *e2eStack, name lake.TableName) *table.Table {
	t.Helper()
	tbl, err := lake.LoadTable(context.Background(), s.r.Catalog, name.Validation())
	if err != nil || tbl == nil {
		t.Fatalf("validation table: %v", err)
	}
	return tbl
}
