package activities

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// TestBatchLogLimiter: a table's first batch gets an INFO line, the next
// ones within BatchLogEvery do not (counted), the first one after it does
// and reports how many were quiet; tables are limited separately.
func TestBatchLogLimiter(t *testing.T) {
	var l batchLogLimiter
	t0 := time.Date(2026, 12, 5, 4, 0, 0, 0, time.UTC)
	for i, c := range []struct {
		table     string
		at        time.Duration
		info      bool
		wantQuiet int
	}{
		{"shop.orders", 0, true, 0},
		{"shop.orders", time.Second, false, 0},
		{"shop.customers", time.Second, true, 0},
		{"shop.orders", 9 * time.Second, false, 0},
		{"shop.orders", 10 * time.Second, true, 2},
		{"shop.orders", 11 * time.Second, false, 0},
		{"shop.orders", 25 * time.Second, true, 1},
	} {
		info, quiet := l.take(c.table, t0.Add(c.at))
		if info != c.info || quiet != c.wantQuiet {
			t.Errorf("step %d (%s at %s): info %v quiet %d, want %v %d", i, c.table, c.at, info, quiet, c.info, c.wantQuiet)
		}
	}
}

// TestApplyBatchLogsAtInfo: the worker's log gets one INFO line for a
// table's first batch with table, batch, records, changes, duration and
// lag (records left in the topic after the batch); the next batches
// within BatchLogEvery are DEBUG lines.
func TestApplyBatchLogsAtInfo(t *testing.T) {
	ctx := context.Background()
	s := sample.Generate(sample.Options{Seed: 7, Inserts: 150, Updates: 100})
	spec := TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"}, MaxEvents: 100}.Defaults()
	total := int64(len(s.Delivered))
	if total != 250 {
		t.Fatalf("the stream has %d records, the test expects 250", total)
	}
	a := New(mustCatalog(t), kafkaTopic(t, spec.Topic, s.Delivered))
	a.StateDir = t.TempDir()
	var buf bytes.Buffer
	a.BatchLog = slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	for i, off := 0, int64(0); off < total; i++ {
		to := min(off+100, total)
		b := lake.Batch{ID: fmt.Sprintf("b%d", i+1), Seq: int64(i + 1), Topic: spec.Topic,
			Ranges: []lake.Range{{From: off, To: to}}, EndOffsets: lake.Offsets{0: to}}
		if _, err := a.ApplyBatch(ctx, ApplyRequest{Spec: spec, Batch: b}); err != nil {
			t.Fatalf("batch %d: %v", i+1, err)
		}
		off = to
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d log lines, want 3:\n%s", len(lines), buf.String())
	}
	info := regexp.MustCompile(`level=INFO msg="batch applied" table=shop.orders batch=b1 records=100 changes=100 duration=\S+ lag=150 batches_since_last_line=0$`)
	if !info.MatchString(lines[0]) {
		t.Errorf("first line %q, want it to match %s", lines[0], info)
	}
	for i, l := range lines[1:] {
		want := regexp.MustCompile(fmt.Sprintf(`level=DEBUG msg="batch applied" table=shop.orders batch=b%d records=%d changes=%d duration=\S+$`, i+2, []int{100, 50}[i], []int{100, 50}[i]))
		if !want.MatchString(l) {
			t.Errorf("line %d %q, want it to match %s", i+2, l, want)
		}
	}
}
