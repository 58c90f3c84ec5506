package workflows

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// ApplyBatch's summary names the phase, the batch, its ranges and the
// lag the batch leaves: the high watermarks of the last plan minus the
// batch's end offsets (a partition outside the batch keeps its offset).
func TestBatchNote(t *testing.T) {
	b := payload.Batch{ID: "shop.orders#8", Seq: 8, Ranges: []payload.Range{{Partition: 0, From: 120, To: 140}}}
	got := batchNote(PhaseStream, b, lake.Offsets{0: 120, 1: 80}, lake.Offsets{0: 150, 1: 85})
	if want := "stream · batch shop.orders#8: p0 [120,140) · 15 records queued behind it"; got != want {
		t.Fatalf("batchNote = %q, want %q", got, want)
	}
	// no plan seen yet (a batch recovered before its first plan): no lag
	if got, want := batchNote(PhaseSnapshot, b, nil, nil), "snapshot · batch shop.orders#8: p0 [120,140)"; got != want {
		t.Fatalf("batchNote = %q, want %q", got, want)
	}
	// many partitions: the first maxNotedPartitions ranges, the rest counted
	var many payload.Batch
	many.ID = "shop.orders#9"
	hw := lake.Offsets{}
	for p := range int32(40) {
		many.Ranges = append(many.Ranges, payload.Range{Partition: p, From: 1000000, To: 1000010})
		hw[p] = 1000011
	}
	got = batchNote(PhaseStream, many, nil, hw)
	want := "stream · batch shop.orders#9: p0 [1000000,1000010) p1 [1000000,1000010) p2 [1000000,1000010) p3 [1000000,1000010) " +
		"p4 [1000000,1000010) p5 [1000000,1000010) and 34 more ranges · 40 records queued behind it"
	if got != want {
		t.Fatalf("batchNote = %q, want %q", got, want)
	}
}

// A wait's summary: phase, the command that goes on, lag and offsets,
// and (not when paused) the last error, cut so that the note fits
// maxSummary bytes, on a rune boundary.
func TestWaitNote(t *testing.T) {
	sp := spec.Defaults()
	st := &TableState{Spec: sp, Offsets: lake.Offsets{0: 0, 1: 7}, HighWatermarks: lake.Offsets{0: 120}}
	got := st.waitNote(PhasePaused, "`starter resume "+sp.Table+"`")
	if want := "paused · lag 120 records · p0 at 0 of 120 · p1 at 7 · go on: `starter resume shop.orders`"; got != want {
		t.Fatalf("paused note = %q, want %q", got, want)
	}
	st.LastError = payload.ErrTypeQuarantineLimit + ": batch 1 set aside 120 records, more than --max-quarantine 100; their raw bytes, offsets and reasons are in shop.orders_quarantine"
	got = st.waitNote(PhaseBlocked, st.goOnBlocked())
	want := "blocked · QuarantineLimit: batch 1 set aside 120 records, more than --max-quarantine 100; their raw bytes, offsets and … · " +
		"lag 120 records · p0 at 0 of 120 · p1 at 7 · go on: `starter dump shop.orders --quarantine`, then `starter settings shop.orders " +
		"--max-quarantine N` or a fix, then `starter retry shop.orders`"
	if got != want {
		t.Fatalf("blocked note =\n%q, want\n%q", got, want)
	}
	if len(got) != maxSummary {
		t.Fatalf("blocked note is %d bytes, want it cut at %d", len(got), maxSummary)
	}
	// no plan yet, an error with multi-byte runes cut on a rune boundary
	st = &TableState{Spec: sp, LastError: "BadSpec: " + strings.Repeat("表", 200)}
	got = st.waitNote(PhaseSchemaBlocked, "`starter schema shop.orders --evolve` or `--skip`")
	want = "schema-blocked · BadSpec: " + strings.Repeat("表", 68) + "… · no batch planned yet · go on: `starter schema shop.orders --evolve` or `--skip`"
	if got != want {
		t.Fatalf("schema-blocked note =\n%q (%d bytes), want\n%q", got, len(got), want)
	}
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 3, "abc"},
		{"abcd", 3, "…"},
		{"abcdefgh", 6, "abc…"},
		{"ab表cd", 5, "ab…"},
	} {
		if got := clip(c.s, c.n); got != c.want {
			t.Errorf("clip(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
	}
}

// The recorded v11 histories show the table in the Event History, which
// the Web UI's main page lists: each ApplyBatch's summary names the
// batch, its range and the lag it leaves; a paused and a blocked table
// wait on a timer whose summary says why, where the table stands and
// the command that goes on, cancelled when the wait ends.
func TestRecordedNotes(t *testing.T) {
	notes := func(file string) []string {
		f, err := os.Open(filepath.Join("testdata", "replay", file))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		h, err := client.HistoryFromJSON(f, client.HistoryJSONOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range h.GetEvents() {
			kind := strings.TrimPrefix(e.GetEventType().String(), "EventType")
			switch e.GetEventType() {
			case enumspb.EVENT_TYPE_TIMER_STARTED, enumspb.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED:
				var s string
				if p := e.GetUserMetadata().GetSummary(); p != nil {
					if err := converter.GetDefaultDataConverter().FromPayload(p, &s); err != nil {
						t.Fatal(err)
					}
				}
				out = append(out, kind+": "+s)
			case enumspb.EVENT_TYPE_TIMER_CANCELED, enumspb.EVENT_TYPE_TIMER_FIRED:
				out = append(out, kind)
			}
		}
		return out
	}
	has := func(file string, want ...string) {
		t.Helper()
		got := notes(file)
		i := 0
		for _, g := range got {
			if i < len(want) && g == want[i] {
				i++
			}
		}
		if i < len(want) {
			t.Fatalf("%s: no %q in order among\n%s", file, want[i], strings.Join(got, "\n"))
		}
	}
	has("v12-stream.json",
		"ActivityTaskScheduled: plan next batch of replay.public.stream",
		"ActivityTaskScheduled: stream · batch replay.stream#1: p0 [0,20) · 225 records queued behind it",
		"ActivityTaskScheduled: stream · batch replay.stream#13: p0 [240,245) · 0 records queued behind it")
	// paused, then a settings update (max events 20 → 10) ends the paused
	// run; the next starts paused, is resumed and applies batches of 10
	has("v12-settings.json",
		"ActivityTaskScheduled: stream · batch replay.paused#5: p0 [80,100) · 22 records queued behind it",
		"TimerStarted: paused · lag 22 records · p0 at 100 of 122 · go on: `starter resume replay.paused`",
		"TimerCanceled")
	has("v12-paused.json",
		"TimerStarted: paused · lag 22 records · p0 at 100 of 122 · go on: `starter resume replay.paused`",
		"TimerCanceled",
		"ActivityTaskScheduled: stream · batch replay.paused#6: p0 [100,110) · 12 records queued behind it",
		"ActivityTaskScheduled: stream · batch replay.paused#8: p0 [120,122) · 0 records queued behind it")
	blocked := "TimerStarted: blocked · QuarantineLimit: 2 records of batch replay.blocked#1 cannot be applied (limit 1 per batch); " +
		"first: replay.public.bl… · lag 2 records · p0 at 0 of 2 · go on: `starter dump replay.blocked --quarantine`, " +
		"then `starter settings replay.blocked --max-quarantine N` or a fix, then `starter retry replay.blocked`"
	has("v12-blocked.json", "ActivityTaskScheduled: stream · batch replay.blocked#1: p0 [0,2) · 0 records queued behind it",
		blocked, "TimerCanceled", blocked, "TimerCanceled")
}
