package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/workflows"
)

// caughtUp counts applied records against the lag as it is now, and does
// not call a table caught up before it has seen its topic.
func TestCaughtUp(t *testing.T) {
	first := workflows.Status{Phase: workflows.PhaseStream, TopicMissing: true}
	first.Totals.Records = 7
	hwm := lake.Offsets{0: 134}
	for _, c := range []struct {
		name        string
		st          workflows.Status
		done, total int64
		finished    bool
	}{
		{"topic missing", workflows.Status{Phase: workflows.PhaseStream, TopicMissing: true}, 0, 0, false},
		{"not planned yet", workflows.Status{Phase: workflows.PhaseStarting}, 0, 0, false},
		{"lag appeared", workflows.Status{Phase: workflows.PhaseStream, HighWatermarks: hwm, TotalLag: 134}, 0, 134, false},
		{"half way", workflows.Status{Phase: workflows.PhaseStream, HighWatermarks: hwm, TotalLag: 60, Totals: workflows.Totals{Records: 81}}, 74, 134, false},
		{"backfilling", workflows.Status{Phase: workflows.PhaseBackfill, HighWatermarks: hwm, Totals: workflows.Totals{Records: 141}}, 134, 134, false},
		{"caught up", workflows.Status{Phase: workflows.PhaseStream, HighWatermarks: hwm, Totals: workflows.Totals{Records: 141}}, 134, 134, true},
		{"paused, caught up", workflows.Status{Phase: workflows.PhasePaused, HighWatermarks: hwm, Totals: workflows.Totals{Records: 141}}, 134, 134, true},
	} {
		done, total, finished := caughtUp(first, c.st)
		if done != c.done || total != c.total || finished != c.finished {
			t.Errorf("%s: caughtUp = %d, %d, %v; want %d, %d, %v", c.name, done, total, finished, c.done, c.total, c.finished)
		}
	}
}

// Plain progress lines: the first update, then at most one every few
// seconds, and always the line that completes the total.
func TestProgressPlainLines(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, "catch-up shop.orders", "records")
	for range 5 {
		p.update(0, 0)
	}
	p.update(50, 134)
	p.update(134, 134)
	p.update(134, 134)
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || lines[0] != "catch-up shop.orders: 0 records so far, total not known yet" ||
		!strings.HasPrefix(lines[1], "catch-up shop.orders: 134/134 records, ") || !strings.HasSuffix(lines[1], " records/s, ETA 0s") {
		t.Fatalf("lines:\n%s", buf.String())
	}
}

// Live lag: from Kafka's end offsets and the applied offsets; partitions
// the table has not read yet count from where it will start them
// (activities.StartOffsets): their log start, or, on a table starting from
// the latest offset before its first plan, not at all. A partition added
// to the topic after the table started counts from its log start also
// with "latest" (it counted as no lag, hiding records the table then
// skipped: a breaker's finding, 2026-12-04).
func TestApplyLiveLag(t *testing.T) {
	ends, starts := map[int32]int64{0: 1336, 1: 50, 2: 40}, map[int32]int64{0: 0, 1: 0, 2: 10}
	st := workflows.Status{Offsets: lake.Offsets{0: 723, 1: 50}, Lag: lake.Offsets{0: 0, 1: 0}, HighWatermarks: lake.Offsets{0: 723, 1: 50}, TopicMissing: true}
	applyLiveLag(&st, ends, starts)
	if st.TotalLag != 643 || st.Lag[0] != 613 || st.Lag[1] != 0 || st.Lag[2] != 30 || st.HighWatermarks[0] != 1336 || st.TopicMissing || st.LagSource != lagFromKafka {
		t.Fatalf("earliest: %+v", st)
	}
	st.Spec.StartFrom = "latest"
	applyLiveLag(&st, ends, starts)
	if st.TotalLag != 643 || st.Lag[2] != 30 {
		t.Fatalf("latest, a partition added after the start: %+v", st)
	}
	st.Offsets = nil
	applyLiveLag(&st, ends, starts)
	if st.TotalLag != 0 {
		t.Fatalf("latest, before the first plan: %+v", st)
	}
	st.TopicMissing = true // the last plan found no topic: created after the start
	applyLiveLag(&st, ends, starts)
	if st.TotalLag != 1336+50+30 {
		t.Fatalf("latest, a topic created after the start: %+v", st)
	}
}

// The ETA is the remaining units at the rate so far, in seconds (it was
// nanoseconds, so every ETA printed as 0s).
func TestProgressETA(t *testing.T) {
	var buf bytes.Buffer
	p := newProgress(&buf, "catch-up shop.orders", "records")
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	now := t0
	p.start, p.now = t0, func() time.Time { return now }
	now = t0.Add(10 * time.Second)
	p.update(50, 150) // 5 records/s, 100 to go
	now = t0.Add(20 * time.Second)
	p.update(60, 9060) // 3 records/s, 9000 to go: 50 minutes
	now = t0.Add(30 * time.Second)
	p.update(9060, 9060)
	want := "catch-up shop.orders: 50/150 records, 5 records/s, ETA 20s\n" +
		"catch-up shop.orders: 60/9060 records, 3 records/s, ETA 50m0s\n" +
		"catch-up shop.orders: 9060/9060 records, 302 records/s, ETA 0s\n"
	if buf.String() != want {
		t.Fatalf("lines:\n%s\nwant:\n%s", buf.String(), want)
	}
	for _, c := range []struct {
		done, total int64
		rate        float64
		want        string
	}{
		{0, 100, 0, "?"}, {0, 0, 0, "?"}, {100, 100, 7, "0s"}, {1, 3601, 1, "1h0m0s"}, {10, 11, 3, "0s"}, {10, 12, 1, "2s"},
	} {
		if got := eta(c.done, c.total, c.rate); got != c.want {
			t.Errorf("eta(%d, %d, %g) = %q, want %q", c.done, c.total, c.rate, got, c.want)
		}
	}
}

// A table caught up at the first look gets one line, not a 0/0 bar; one
// that is not shows its progress and ends on the completing line.
func TestFollowAlreadyCaughtUp(t *testing.T) {
	first := workflows.Status{Phase: workflows.PhaseStream, HighWatermarks: lake.Offsets{0: 134}}
	first.Totals.Records = 134
	var buf bytes.Buffer
	get := func(context.Context) (workflows.Status, error) { return first, nil }
	err := follow(context.Background(), get, "shop.orders", newProgress(&buf, "catch-up shop.orders", "records"),
		func(st workflows.Status) (int64, int64, bool) { return caughtUp(first, st) })
	if err != nil || buf.String() != "catch-up shop.orders: already caught up (lag 0 records)\n" {
		t.Fatalf("err %v, output %q", err, buf.String())
	}
	behind := first
	behind.TotalLag = 6
	after := first
	after.Totals.Records = 140
	n := 0
	get = func(context.Context) (workflows.Status, error) {
		n++
		if n == 1 {
			return behind, nil
		}
		return after, nil
	}
	buf.Reset()
	err = follow(context.Background(), get, "shop.orders", newProgress(&buf, "catch-up shop.orders", "records"),
		func(st workflows.Status) (int64, int64, bool) { return caughtUp(first, st) })
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if err != nil || len(lines) != 2 || lines[0] != "catch-up shop.orders: 0/6 records, 0 records/s, ETA ?" || !strings.HasPrefix(lines[1], "catch-up shop.orders: 6/6 records, ") {
		t.Fatalf("err %v, output:\n%s", err, buf.String())
	}
}
