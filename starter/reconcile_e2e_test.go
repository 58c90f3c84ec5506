package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/internal/source/pgtest"
	"github.com/lakemirror/lakemirror/internal/telemetry"
)

// `starter reconcile` through the real ReconcileWorkflow on the embedded
// stack against a private PostgreSQL: a mirror streamed from the topic
// agrees with the source table (exit 0); a delete at the source whose
// event is lost is a ghost row named by key (exit 1, the findings gauge
// 1); --repair soft-deletes it and the next run passes.
func TestReconcileCommand(t *testing.T) {
	s := startStack(t)
	pg := pgtest.Start(t)
	ctx := context.Background()
	dsn := pg.CreateDatabase(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	exec := func(sql string) {
		t.Helper()
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	exec(`CREATE TABLE public.orders (order_id int PRIMARY KEY, status text NOT NULL);
		INSERT INTO public.orders VALUES (1, 'paid'), (2, 'new'), (3, 'new')`)
	const topic, table = "rec.public.orders", "rec.orders"
	if err := s.r.Kafka.CreateTopic(ctx, topic, 1); err != nil {
		t.Fatal(err)
	}
	pgc := sample.PostgresChange
	order := func(id int, status string) string { return fmt.Sprintf(`{"order_id":%d,"status":%q}`, id, status) }
	for _, m := range []sample.Message{pgc("c", "null", order(1, "new"), 100), pgc("c", "null", order(2, "new"), 110),
		pgc("c", "null", order(3, "new"), 115), pgc("u", order(1, "new"), order(1, "paid"), 120)} {
		if err := s.r.Kafka.Produce(ctx, &kgo.Record{Topic: topic, Value: m.Value}); err != nil {
			t.Fatal(err)
		}
	}
	if out, errw, code := s.cli("start", topic, "--table", table, "--key", "order_id", "--schedules=false"); code != exitOK {
		t.Fatalf("start: exit %d\n%s%s", code, out, errw)
	}
	waitFor(t, time.Minute, table+" at offset 4", func() bool {
		st := statusOf(t, s.r.Client, table)
		return st.Offsets[0] == 4 && st.LastBatch != nil
	})
	// the sample events' commit times are months old: the measured p99
	// is capped
	reconcile := func(extra ...string) (string, string, int) {
		return s.cli(append([]string{"reconcile", table, "--source", dsn, "--source-table", "public.orders",
			"--chunk", "2", "--pause", "0", "--settle-floor", "0", "--settle-max", "10ms"}, extra...)...)
	}
	out, errw, code := reconcile()
	for _, want := range []string{"PASS reconcile-ghost   0 ghost rows\n", "PASS reconcile-missing 0 missing rows\n",
		"PASS reconcile-changed 0 changed rows\n", "PASS op-balance        3 creates − 0 deletes = 3; 3 live mirror rows; 0 keys disagree\n",
		"2 key ranges (0 differed), 3 source rows, 3 live mirror rows; 0 keys re-read, 0 unsettled\n", "settling period 10ms"} {
		if code != exitOK || !strings.Contains(out, want) {
			t.Fatalf("a clean table: exit %d, want %q in\n%s%s", code, want, out, errw)
		}
	}

	exec(`DELETE FROM public.orders WHERE order_id = 2`) // its event is lost
	out, errw, code = reconcile()
	k, _ := cdc.EncodeKey(nil, cdc.Int(2))
	key := hex.EncodeToString(k)
	if code != exitFailure || !strings.Contains(out, "FAIL reconcile-ghost   1 ghost rows\n       key "+key+": live in the mirror (_seq "+cdc.SeqOf(110, 110).Hex()+"), absent from the source (read at ") ||
		!strings.Contains(errw, "1 of 4 checks failed") {
		t.Fatalf("after a lost delete: exit %d\n%s%s", code, out, errw)
	}
	if got := gauge(t, s, telemetry.MetricValFindings, "reconcile-ghost"); got != 1 {
		t.Fatalf("%s{check=reconcile-ghost} = %g, want 1", telemetry.MetricValFindings, got)
	}

	out, errw, code = reconcile("--repair")
	if code != exitFailure || !strings.Contains(out, "PASS reconcile-repair  repaired 1 ghost rows (soft-deleted), 0 missing rows, 0 changed rows at source position ") ||
		!strings.Contains(out, "       key "+key+": repaired (reconcile-ghost)\n") {
		t.Fatalf("--repair: exit %d\n%s%s", code, out, errw)
	}
	out, errw, code = reconcile()
	if code != exitOK || !strings.Contains(out, "PASS op-balance        3 creates − 1 deletes = 2; 2 live mirror rows; 0 keys disagree\n") {
		t.Fatalf("after the repair: exit %d\n%s%s", code, out, errw)
	}
	if got := gauge(t, s, telemetry.MetricValFindings, "reconcile-ghost"); got != 0 {
		t.Fatalf("%s{check=reconcile-ghost} = %g, want 0", telemetry.MetricValFindings, got)
	}
	// status shows the last reconciliation run
	out, errw, code = s.cli("status", table)
	if code != exitOK || !regexp.MustCompile(`\nlast reconciliation +\S+: 4 checks, all passed\n`).MatchString(out) || strings.Contains(out, "last validation") {
		t.Fatalf("status: exit %d\n%s%s", code, out, errw)
	}
}

// gauge reads the worker's gauge name for check (table rec.orders).
func gauge(t *testing.T, s *e2eStack, name, check string) float64 {
	t.Helper()
	fams, err := s.r.Metrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["check"] == check && labels["table"] == "rec.orders" {
				return m.GetGauge().GetValue()
			}
		}
	}
	t.Fatalf("no %s{check=%q}", name, check)
	return 0
}
