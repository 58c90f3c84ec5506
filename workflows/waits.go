package workflows

import (
	"fmt"
	"maps"
	"strings"
	"time"
	"unicode/utf8"

	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/internal/human"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// What the workflow's Event History says about the table: the Temporal
// Web UI's main page of a workflow lists its events with their summaries
// (the SDK's user metadata), while the current details (details.go) are on
// the "User Metadata" tab only (docs/webui.md). So every batch's ApplyBatch
// names its phase, its ranges and the lag it leaves (applyOptions), and
// on runs with waitNoteVersion a paused, blocked or schema-blocked table
// waits on a timer whose summary says why, where it stands and the
// command that goes on (awaitNoted); a retrying activity's backoff timer
// says the same (execVisible).

// noteTimer is how long one timer of a noted wait runs; a longer wait
// starts another with the same summary (about 5 events a day).
const noteTimer = 24 * time.Hour

// maxSummary is the longest summary, in bytes, given to an activity or a
// timer: Temporal servers may refuse a summary payload above
// limit.userMetadataSummarySize (400 bytes, encoding included).
const maxSummary = 320

// maxNotedPartitions is how many partitions a summary lists; the rest
// are counted.
const maxNotedPartitions = 6

// clip cuts s to at most n bytes on a rune boundary, marking the cut
// with "…".
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// awaitNoted waits until done, like workflow.Await. On runs with
// waitNoteVersion it waits on timers of noteTimer whose summary is note
// (clipped to maxSummary), so the Event History shows the wait; the
// pending timer is cancelled when done turns true (a TimerCanceled event:
// no timer outlives the wait).
func (st *TableState) awaitNoted(ctx workflow.Context, note string, done func() bool) {
	if st.notedWaits == workflow.DefaultVersion {
		_ = workflow.Await(ctx, done)
		return
	}
	opts := workflow.TimerOptions{Summary: clip(note, maxSummary)}
	for !done() {
		tctx, cancel := workflow.WithCancel(ctx)
		timer := workflow.NewTimerWithOptions(tctx, noteTimer, opts)
		_ = workflow.Await(ctx, func() bool { return done() || timer.IsReady() })
		if !timer.IsReady() {
			cancel()
		}
	}
}

// waitNote is the summary of a wait in phase (blocked, schema-blocked,
// paused, retrying): the phase, the last error (not when paused; cut so
// that the note fits maxSummary, at least minNotedError bytes of it
// kept), the table's lag and offsets, and the command that goes on.
func (st *TableState) waitNote(phase, goOn string) string {
	tail := " · " + st.positionNote() + " · go on: " + goOn
	if st.LastError == "" || phase == PhasePaused {
		return clip(phase+tail, maxSummary)
	}
	room := max(maxSummary-len(phase)-len(" · ")-len(tail), minNotedError)
	return clip(phase+" · "+clip(st.LastError, room)+tail, maxSummary)
}

// minNotedError is the least of the last error a wait's summary keeps.
const minNotedError = 80

// positionNote is the table's lag and offsets at the last plan, in one
// line: "lag 120 records · p0 at 0 of 120".
func (st *TableState) positionNote() string {
	s := st.status()
	if len(s.Offsets) == 0 && len(s.HighWatermarks) == 0 {
		return "no batch planned yet"
	}
	var b strings.Builder
	b.WriteString("lag " + human.Count(s.TotalLag, "record", "records"))
	// the union of partitions, sorted below: the text is the same on
	// every replay
	all := payload.Offsets{}
	//workflowcheck:ignore
	maps.Copy(all, s.HighWatermarks)
	//workflowcheck:ignore
	maps.Copy(all, s.Offsets)
	//workflowcheck:ignore
	ps := all.SortedPartitions()
	for i, p := range ps {
		if i == maxNotedPartitions {
			b.WriteString(fmt.Sprintf(" · %d more partitions", len(ps)-i))
			break
		}
		if h, ok := s.HighWatermarks[p]; ok {
			b.WriteString(fmt.Sprintf(" · p%d at %d of %d", p, s.Offsets[p], h))
		} else {
			b.WriteString(fmt.Sprintf(" · p%d at %d", p, s.Offsets[p]))
		}
	}
	return b.String()
}

// goOnBlocked is the command that takes a blocked table on.
func (st *TableState) goOnBlocked() string {
	t := st.Spec.Table
	if strings.HasPrefix(st.LastError, payload.ErrTypeQuarantineLimit+":") {
		return "`starter dump " + t + " --quarantine`, then `starter settings " + t + " --max-quarantine N` or a fix, then `starter retry " + t + "`"
	}
	return "fix the cause the error names, then `starter retry " + t + "`"
}

// batchNote is ApplyBatch's summary for batch b in phase: the batch,
// its ranges (at most maxNotedPartitions) and the records queued behind
// it when it was scheduled (high watermarks of the last plan minus the
// batch's end offsets): the lag it leaves if it is applied, said so that
// a failed batch's summary does not read as the table's lag, and short
// enough to show within the Web UI's 80-character cut.
func batchNote(phase string, b payload.Batch, offsets, highWatermarks payload.Offsets) string {
	var rs []string
	end := payload.Offsets{}
	//workflowcheck:ignore
	maps.Copy(end, offsets)
	for i, r := range b.Ranges {
		if i < maxNotedPartitions {
			rs = append(rs, fmt.Sprintf("p%d [%d,%d)", r.Partition, r.From, r.To))
		} else if i == maxNotedPartitions {
			rs = append(rs, fmt.Sprintf("and %d more ranges", len(b.Ranges)-i))
		}
		end[r.Partition] = max(end[r.Partition], r.To)
	}
	note := fmt.Sprintf("%s · batch %s: %s", phase, b.ID, strings.Join(rs, " "))
	if len(highWatermarks) > 0 {
		var lag int64
		// a sum: the order of the partitions does not change it
		//workflowcheck:ignore
		for p, h := range highWatermarks {
			lag += max(h-end[p], 0)
		}
		note += " · " + human.Count(lag, "record", "records") + " queued behind it"
	}
	return clip(note, maxSummary)
}
