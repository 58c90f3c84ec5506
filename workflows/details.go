package workflows

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"go.temporal.io/sdk/workflow"

	"github.com/lakemirror/lakemirror/internal/human"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// The table workflow's current details: the Markdown the Temporal Web UI
// shows on the workflow's page ("Current Details", the SDK's user
// metadata, answered by the built-in __temporal_workflow_metadata query
// from the workflow's state; docs/operating.md, "Web UI"). They are set at
// every phase change, every loop round (so after every batch) and when an
// activity is scheduled on a worker, and are no workflow command: setting
// them changes no history and needs no version marker.

// recentBatches is how many applied batches the current details list.
const recentBatches = 5

// BatchLine is one applied batch as the current details list it.
type BatchLine struct {
	Seq        int64     `json:"seq"`
	Records    int       `json:"records"`    // Kafka records fetched
	Changes    int       `json:"changes"`    // row-change events decoded
	Applied    int       `json:"applied"`    // changes the mirror applied
	Stale      int       `json:"stale"`      // changes below the row's position (older than the mirror's row)
	Duplicates int       `json:"duplicates"` // changes at the row's position (redelivered)
	Millis     int64     `json:"ms"`         // workflow time from planning-done to applied (retries included), milliseconds
	Done       time.Time `json:"done"`       // workflow time the batch was applied
	Bronze     int64     `json:"bronze_snapshot,omitempty"`
	Mirror     int64     `json:"mirror_snapshot,omitempty"`
	History    int64     `json:"history_snapshot,omitempty"`
}

// TableSnapshots are the Iceberg snapshots of the table's newest commits
// by this pipeline, per table (none: zero).
type TableSnapshots struct {
	Bronze  SnapshotAt `json:"bronze,omitempty"`
	Mirror  SnapshotAt `json:"mirror,omitempty"`
	History SnapshotAt `json:"history,omitempty"`
}

// SnapshotAt is one table's newest commit: its Iceberg snapshot id and
// the batch that made it.
type SnapshotAt struct {
	ID    int64 `json:"id,omitempty"`
	Batch int64 `json:"batch,omitempty"`
}

// activityNote is the activity the table waits for, for the current
// details: its summary, the worker queue it is scheduled on and since
// when (workflow time).
type activityNote struct {
	summary, queue string
	since          time.Time
}

// noteBatch records an applied batch in st.RecentBatches (the last
// recentBatches), started at start (workflow time).
func (st *TableState) noteBatch(ctx workflow.Context, res *payload.ApplyResult, start time.Time) {
	now := workflow.Now(ctx)
	line := BatchLine{Seq: res.BatchSeq, Records: res.Records, Changes: res.Changes, Applied: res.Mirror.Applied,
		Stale: res.Mirror.Stale, Duplicates: res.Mirror.Duplicates, Millis: now.Sub(start).Milliseconds(), Done: now.UTC(),
		Bronze: res.Bronze.SnapshotID, Mirror: res.Mirror.SnapshotID, History: res.History.SnapshotID}
	if line.Seq == 0 {
		line.Seq = st.BatchSeq
	}
	for _, c := range []struct {
		at *SnapshotAt
		id int64
	}{{&st.Snapshots.Bronze, line.Bronze}, {&st.Snapshots.Mirror, line.Mirror}, {&st.Snapshots.History, line.History}} {
		if c.id != 0 {
			*c.at = SnapshotAt{ID: c.id, Batch: line.Seq}
		}
	}
	st.RecentBatches = append(st.RecentBatches, line)
	if n := len(st.RecentBatches); n > recentBatches {
		st.RecentBatches = append([]BatchLine(nil), st.RecentBatches[n-recentBatches:]...)
	}
}

// showDetails sets the workflow's current details from st (no command).
func (st *TableState) showDetails(ctx workflow.Context) {
	workflow.SetCurrentDetails(ctx, st.details(workflow.Now(ctx)))
}

// waiting records the activity the table now waits for (a zero note:
// none) and shows it.
func (st *TableState) waiting(ctx workflow.Context, summary, queue string) {
	st.activity = activityNote{summary: summary, queue: queue}
	if summary != "" {
		st.activity.since = workflow.Now(ctx)
	}
	st.showDetails(ctx)
}

// details renders st as the Markdown of the current details at now
// (workflow time): the phase and why, with the last error and the
// command that goes on; offsets, high watermarks and lag per partition;
// the last batches; the Iceberg snapshot ids of the last batch; the
// effective settings (st.Spec, updates included, not the start input).
func (st *TableState) details(now time.Time) string {
	s := st.status()
	t := s.Table
	var b strings.Builder
	b.WriteString(fmt.Sprintf("**Phase: %s** · table `%s` ← topic `%s`\n\n", s.Phase, t, s.Topic))
	b.WriteString(st.why(now))
	b.WriteString("\n\n")

	// offsets and lag
	if len(s.Offsets) == 0 && len(s.HighWatermarks) == 0 {
		b.WriteString("**Offsets:** none yet (no batch planned)\n\n")
	} else {
		b.WriteString("| partition | offset (next to read) | high watermark | lag |\n|---:|---:|---:|---:|\n")
		all := maps.Clone(s.Offsets)
		if all == nil {
			all = payload.Offsets{}
		}
		// the union of partitions, sorted below: the order is fixed, and this
		// only renders text
		//workflowcheck:ignore
		maps.Copy(all, s.HighWatermarks)
		//workflowcheck:ignore
		ps := all.SortedPartitions()
		for _, p := range ps {
			hw, lag := "–", "–"
			if h, ok := s.HighWatermarks[p]; ok {
				hw, lag = fmt.Sprint(h), fmt.Sprint(s.Lag[p])
			}
			b.WriteString(fmt.Sprintf("| %d | %d | %s | %s |\n", p, s.Offsets[p], hw, lag))
		}
		b.WriteString(fmt.Sprintf("\n**Lag: %s** (all partitions, at the last plan)", human.Count(s.TotalLag, "record", "records")))
		if s.NewestSourceTs > 0 {
			src := time.UnixMicro(s.NewestSourceTs).UTC()
			b.WriteString(fmt.Sprintf(" · **freshness %s** (newest applied source commit %s)", human.Duration(now.Sub(src)), src.Format(time.RFC3339)))
		}
		b.WriteString("\n\n")
	}

	// the last batches
	if len(st.RecentBatches) == 0 {
		b.WriteString("**Last batches:** none applied yet\n\n")
	} else {
		b.WriteString(fmt.Sprintf("**Last batches** (%d applied in all, %s):\n\n", s.Totals.Batches, human.Count(s.Totals.Records, "record", "records")))
		b.WriteString("| batch | records | changes | applied | stale | duplicates | duration | applied at (UTC) |\n|---:|---:|---:|---:|---:|---:|---:|---|\n")
		for i := len(st.RecentBatches) - 1; i >= 0; i-- {
			l := st.RecentBatches[i]
			b.WriteString(fmt.Sprintf("| %d | %d | %d | %d | %d | %d | %s | %s |\n", l.Seq, l.Records, l.Changes, l.Applied, l.Stale, l.Duplicates,
				batchDuration(l.Millis), l.Done.Format("2006-01-02 15:04:05")))
		}
		l := st.RecentBatches[len(st.RecentBatches)-1]
		b.WriteString(fmt.Sprintf("\n**Iceberg snapshots** after batch %d: %s\n\n", l.Seq, st.snapshotIDs(l.Seq)))
	}

	// effective settings
	sp := st.Spec
	key := "from the Kafka record key"
	if len(sp.KeyColumns) > 0 {
		key = strings.Join(sp.KeyColumns, ", ")
	}
	grow := ""
	if sp.MaxBatchEvents > sp.MaxEvents {
		grow = fmt.Sprintf(", up to %d while behind", sp.MaxBatchEvents)
	}
	b.WriteString(fmt.Sprintf("**Settings** (in effect, with updates): batch size %d records%s · max wait %s · max quarantine %d · key %s · tables %s",
		sp.MaxEvents, grow, human.Duration(sp.MaxWait), sp.MaxQuarantine, key, strings.Join(sp.Tables(), ", ")))
	if s.Owner != "" {
		b.WriteString(fmt.Sprintf(" · worker `%s`", s.Owner))
	}
	b.WriteString("\n")
	return b.String()
}

// why says why the table is in its phase and how to go on.
func (st *TableState) why(now time.Time) string {
	t := st.Spec.Table
	lastErr := func() string {
		if st.LastError == "" {
			return ""
		}
		return "\n\n**Last error:** " + code(st.LastError)
	}
	switch st.Phase {
	case PhaseBlocked:
		fix := "fix the cause the error names, then `starter retry " + t + "` (or `starter stop " + t + "`)"
		if strings.HasPrefix(st.LastError, payload.ErrTypeQuarantineLimit+":") {
			fix = "look at the records in the quarantine table (`starter dump " + t + " --quarantine`), raise the limit if they may be set aside (`starter settings " + t + " --max-quarantine N`), then `starter retry " + t + "`"
		}
		return "Blocked: a batch failed in a way retrying cannot fix; the table waits for an operator." + lastErr() + "\n\n**To go on:** " + fix
	case PhaseRetrying:
		return "Retrying: an activity keeps failing with an error that may pass (a service down, a wrong password); it is run again with a backoff of up to a minute." +
			lastErr() + "\n\n**To go on:** fix the cause; `starter retry " + t + "` runs it again at once"
	case PhaseSchemaBlocked:
		return "Schema-blocked: the source schema changed in a way that needs a decision." + lastErr() +
			"\n\n**To go on:** `starter schema " + t + " --evolve` (change the tables) or `starter schema " + t + " --skip` (leave the change out)"
	case PhasePaused:
		return "Paused by an operator after its last batch; its Kafka position is held.\n\n**To go on:** `starter resume " + t + "`"
	case PhaseStopped:
		return "Stopped: the pipeline ended on a stop; its tables and offsets stay. Start it again with `starter start`."
	case PhaseStarting:
		return "Starting: recovering the offsets from the Iceberg tables." + st.activityLine(now) + lastErr()
	}
	var why string
	switch {
	case st.TopicMissing:
		why = "Waiting for topic `" + st.Spec.Topic + "` to exist (the connector creates it with its first record)."
	case st.Phase == PhaseSnapshot:
		why = "Applying the connector's source snapshot reads. The phase turns to stream at the table's last read " +
			"(`source.snapshot` `last` or `last_in_data_collection`) or at its first streamed change: " +
			"a table whose connector marks no last read per table (older Debezium releases) and that has had no change since keeps it here."
	case st.Phase == PhaseBackfill:
		why = "Re-applying " + human.Count(len(st.Backfill), "queued backfill range", "queued backfill ranges") + "."
	default:
		why = "Streaming: applying batches as records arrive."
	}
	return why + st.activityLine(now)
}

// activityLine names the activity the table waits for, with the worker
// it was scheduled on and for how long; a routed activity that no worker
// takes in ownerWait moves the table to another worker (hand-over).
func (st *TableState) activityLine(now time.Time) string {
	n := st.activity
	if n.summary == "" {
		if st.routed() && st.Owner == "" && st.prevOwner != "" {
			return "\n\nWaiting for hand-over: worker `" + st.prevOwner + "` took no activity in " + human.Duration(ownerWait) + "; claiming the table for another worker."
		}
		return ""
	}
	line := fmt.Sprintf("\n\nNow: %s", n.summary)
	if n.queue != "" {
		line += " on worker `" + n.queue + "`"
	}
	line += ", since " + n.since.UTC().Format("15:04:05") + " UTC"
	if d := now.Sub(n.since); d > 0 {
		line += " (" + human.Duration(d) + ")"
	}
	if n.queue != "" && st.routed() {
		line += "; a worker that takes no activity in " + human.Duration(ownerWait) + " counts as gone and the table moves to another (hand-over)"
	}
	return line
}

// snapshotIDs lists, for the tables the spec keeps, the Iceberg snapshot
// id of the table's newest commit by this pipeline (st.Snapshots), with
// its batch when that is not last (a batch that changed nothing in a
// table commits nothing there).
func (st *TableState) snapshotIDs(last int64) string {
	var out []string
	for _, t := range st.Spec.Tables() {
		s := map[string]SnapshotAt{"bronze": st.Snapshots.Bronze, "mirror": st.Snapshots.Mirror, "history": st.Snapshots.History}[t]
		switch {
		case s.ID == 0:
			out = append(out, t+" (none committed by this pipeline yet)")
		case s.Batch != last:
			out = append(out, fmt.Sprintf("%s `%d` (batch %d)", t, s.ID, s.Batch))
		default:
			out = append(out, fmt.Sprintf("%s `%d`", t, s.ID))
		}
	}
	return strings.Join(out, ", ")
}

// batchDuration renders a batch's duration: below a minute to 10 ms
// ("480ms", "1.25s"), else human.Duration.
func batchDuration(ms int64) string {
	d := time.Duration(ms) * time.Millisecond
	if d < time.Minute {
		return d.Round(10 * time.Millisecond).String()
	}
	return human.Duration(d)
}

// code renders s as inline Markdown code (backticks inside become ').
func code(s string) string {
	return "`" + strings.ReplaceAll(strings.ReplaceAll(s, "`", "'"), "\n", " ") + "`"
}
