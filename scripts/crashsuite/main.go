// Command crashsuite kills worker processes with SIGKILL at every stage of
// a batch and checks that nothing diverges and how fast the table
// recovers (issue 34; docs/design.md "Recovery after a worker dies",
// numbers in docs/benchmarks.md):
//
//	go build -o /tmp/crashsuite ./scripts/crashsuite
//	/tmp/crashsuite run [-kills 30] [-workers 2] [-seed 34] [-dir DIR] [-keep]
//
// `run` starts the dev stack in its own process (embedded Temporal, the
// embedded Kafka broker, a SQLite Iceberg catalog under -dir; never
// killed), produces a faulty Debezium PostgreSQL stream (internal/sample:
// duplicates, late and out-of-order changes, tombstones) in chunks, starts
// the table workflow and keeps -workers worker processes running: each is
// this binary's `worker` command, which is the production composition
// root (runner.StartWith) with a crash point armed through a file. Each
// kill round arms one stage in that file:
//
//	before-bronze  ApplyBatch has started, nothing of the batch is committed
//	bronze         bronze committed, mirror not
//	mirror         bronze and mirror committed, history not
//	rebuild        RebuildKeys (late keys of the batch before) has started
//
// The stages cycle in that order; the stream is cut into one chunk per
// round and a last one. The worker holding the table (only it runs the
// table's activities) reaches the point, writes a marker and stops there;
// `run` SIGKILLs it, starts a replacement (a new worker id: a new queue,
// its own state dir, no local state) and measures the recovery time: from
// the kill to the moment the table's workflow records the killed batch as
// applied (its bronze, mirror and history commits made) or the killed
// rebuild as done (recovered). A late change goes to RebuildKeys on a
// worker whose state lacks its key's past (a replacement), else it is
// woven from the local state; so a rebuild round also stops, and kills
// untimed, a worker after a mirror commit that lists late keys
// (lakecat.PropBatchLateKeys): the replacement's retry sends those the
// history does not know to RebuildKeys, whose start is killed (timed). After the
// rounds it produces the rest of the stream, waits for the table to catch
// up and checks for divergence: the mirror against the generator's
// expected rows (every column), bronze against the topic (each offset
// exactly once), and the product's validation workflow (0 failed checks).
// It prints one line per kill and the median and maximum recovery time;
// exit status 1 when anything diverged or a round found no crash point.
//
// Not part of `go test ./...`: a run takes minutes.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/iceberg-go/catalog"
	"github.com/twmb/franz-go/pkg/kgo"
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/interceptor"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/config"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/internal/validate"
	"github.com/lakemirror/lakemirror/worker/runner"
	"github.com/lakemirror/lakemirror/workflows"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: crashsuite run|survivor|worker [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "run":
		err = run(os.Args[2:])
	case "survivor":
		err = survivor(os.Args[2:])
	case "worker":
		err = work(os.Args[2:])
	default:
		err = fmt.Errorf("unknown command %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crashsuite:", err)
		os.Exit(1)
	}
}

// Stages, in the order a batch reaches them.
const (
	stageBeforeBronze = "before-bronze"
	stageBronze       = "bronze"
	stageMirror       = "mirror"
	stageRebuild      = "rebuild"
	// markMirrorLate is the marker of the rebuild round's other crash
	// point: after a mirror commit that lists late keys
	// (lakecat.PropBatchLateKeys), whose retry may send them to
	// RebuildKeys (killed untimed, then the round goes on)
	markMirrorLate = "mirror-late"
)

// work runs one worker process: runner.StartWith with the crash point of
// the stage named in the -arm file. Settings come from the environment
// and flags like the worker's (config.Settings).
func work(args []string) error {
	var s config.Settings
	fs := flag.NewFlagSet("worker", flag.ExitOnError)
	bind := s.Bind(fs)
	arm := fs.String("arm", "", "file naming the armed stage")
	marker := fs.String("marker", "", "file written when the crash point is reached")
	_ = fs.Parse(args)
	if err := bind.Finish(); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	p := &crashPoint{arm: *arm, marker: *marker}
	r, err := runner.StartWith(context.Background(), s, logger, runner.Hooks{
		Prepare: func(a *activities.Activities) {
			p.cat = a.Catalog
			a.AfterCommit = p.afterCommit
		},
		Interceptors: []interceptor.WorkerInterceptor{p},
	})
	if err != nil {
		return err
	}
	defer r.Stop()
	fmt.Fprintf(os.Stderr, "worker %s up (pid %d)\n", r.WorkerID, os.Getpid())
	select {} // until killed
}

// crashPoint stops the worker at the armed stage: it writes the marker
// ("<pid> <stage> <batch seq>") and blocks the activity for good, so that
// the suite kills the process exactly there.
type crashPoint struct {
	interceptor.WorkerInterceptorBase
	arm, marker string
	cat         catalog.Catalog // the worker's, for listsLateKeys
}

// armed returns the stage named in the arm file ("" when none).
func (p *crashPoint) armed() string {
	b, err := os.ReadFile(p.arm)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

func (p *crashPoint) reach(stage string, seq int64) {
	if p.armed() == stage {
		p.stop(stage, seq)
	}
}

// stop writes the marker for stage and blocks for good.
func (p *crashPoint) stop(stage string, seq int64) {
	tmp := p.marker + ".tmp"
	if os.WriteFile(tmp, fmt.Appendf(nil, "%d %s %d\n", os.Getpid(), stage, seq), 0o644) == nil {
		_ = os.Rename(tmp, p.marker)
	}
	select {} // the suite kills the process here
}

// afterCommit is Activities.AfterCommit: the bronze and mirror stages.
func (p *crashPoint) afterCommit(_ context.Context, b lake.Batch, table string) error {
	switch table {
	case "bronze":
		p.reach(stageBronze, b.Seq)
	case "mirror":
		p.reach(stageMirror, b.Seq)
		// once per batch: its retry passes the mirror's commit point again
		once := fmt.Sprintf("%s.%s-%d", p.marker, markMirrorLate, b.Seq)
		if _, err := os.Stat(once); err != nil && p.armed() == stageRebuild && p.listsLateKeys(b) {
			_ = os.WriteFile(once, nil, 0o644)
			p.stop(markMirrorLate, b.Seq)
		}
	}
	return nil
}

// listsLateKeys reports whether the mirror's commit of batch b listed
// late keys with their positions before the batch
// (lakecat.PropBatchLateKeys): a retry of the batch's history sends
// those the history does not know to RebuildKeys. b.ID is
// "<table>#<seq>".
func (p *crashPoint) listsLateKeys(b lake.Batch) bool {
	table, _, _ := strings.Cut(b.ID, "#")
	name, err := lake.ParseTableName(table)
	if err != nil || p.cat == nil {
		return false
	}
	tbl, err := p.cat.LoadTable(context.Background(), name.Mirror())
	if err != nil {
		return false
	}
	pre, _, ok, err := lakecat.ReadBatchLateKeys(tbl, b.Seq)
	return err == nil && ok && len(pre) > 0
}

func (p *crashPoint) InterceptActivity(ctx context.Context, next interceptor.ActivityInboundInterceptor) interceptor.ActivityInboundInterceptor {
	return &activityPoint{ActivityInboundInterceptorBase: interceptor.ActivityInboundInterceptorBase{Next: next}, p: p}
}

// activityPoint is the crash point at the start of ApplyBatch
// (before-bronze) and RebuildKeys (rebuild).
type activityPoint struct {
	interceptor.ActivityInboundInterceptorBase
	p *crashPoint
}

func (a *activityPoint) ExecuteActivity(ctx context.Context, in *interceptor.ExecuteActivityInput) (any, error) {
	info := activity.GetInfo(ctx)
	seq := func(prefix string) int64 {
		n, _ := strconv.ParseInt(strings.TrimPrefix(info.ActivityID, prefix), 10, 64)
		return n
	}
	switch info.ActivityType.Name {
	case "ApplyBatch":
		a.p.reach(stageBeforeBronze, seq("apply-"))
	case "RebuildKeys":
		a.p.reach(stageRebuild, seq("rebuild-"))
	}
	return a.Next.ExecuteActivity(ctx, in)
}

// kill is one round's outcome.
type kill struct {
	stage    string
	seq      int64
	recovery time.Duration
}

func run(args []string) error {
	fs := flag.NewFlagSet("run", flag.ExitOnError)
	kills := fs.Int("kills", 30, "kill rounds")
	workers := fs.Int("workers", 2, "worker processes kept running")
	seed := fs.Int64("seed", 34, "seed of the generated stream")
	dir := fs.String("dir", "", "run directory (default: a new temporary one)")
	keep := fs.Bool("keep", false, "keep the run directory")
	_ = fs.Parse(args)
	cleanup, err := runDir(dir, "lakemirror-crashsuite.", *keep)
	if err != nil {
		return err
	}
	defer cleanup()
	ctx := context.Background()
	cl, err := startCluster(ctx, *dir)
	if err != nil {
		return err
	}
	defer cl.stop()
	c, kc, cat, arm, marker := cl.c, cl.kc, cl.cat, cl.arm, cl.marker
	setArm := func(stage string) error { return os.WriteFile(arm, []byte(stage+"\n"), 0o644) }
	if err := setArm("none"); err != nil {
		return err
	}
	for range *workers {
		if _, err := cl.startWorker(); err != nil {
			return err
		}
	}

	// the stream, in one chunk per round and a last one
	// (longer for many kills: a rebuild round may take several chunks
	// before a late change reaches a replacement or a listed batch; late
	// changes all along it, so that every rebuild round finds some)
	f := max(1, *kills/8)
	stream := sample.Generate(sample.Options{Seed: *seed, Inserts: 200 * f, Updates: 500 * f, Deletes: 60 * f, Duplicates: 40 * f, Late: 60 * f,
		OutOfOrder: 40 * f, UnseenDeletes: 10 * f, Tombstones: true, Envelope: true, ReplicaIdentityFull: true, LateAnywhere: true})
	spec := activities.TableSpec{Table: "crash.orders", Topic: "crash.public.orders", KeyColumns: []string{"order_id"},
		MaxEvents: 25, MaxWait: 200 * time.Millisecond}
	if err := kc.CreateTopic(ctx, spec.Topic, 1); err != nil {
		return err
	}
	msgs := stream.Delivered
	rounds, chunks := schedule(len(msgs), *kills)
	produce := func(part []sample.Message) error {
		recs := make([]*kgo.Record, len(part))
		for i, m := range part {
			recs[i] = &kgo.Record{Topic: spec.Topic, Key: m.Key, Value: m.Value}
		}
		return kc.Produce(ctx, recs...)
	}
	if _, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.WorkflowID(spec.Table), TaskQueue: activities.TaskQueue,
		WorkflowExecutionErrorWhenAlreadyStarted: true}, workflows.TableWorkflowName, workflows.TableInput{Spec: spec}); err != nil {
		return err
	}
	name, _ := lake.ParseTableName(spec.Table)

	// rounds: every stage
	var done []kill
	var missed []string
	next := 0 // chunks produced
	sigkills := 0
	killWorker := func(pid int) error {
		if err := cl.kill(pid); err != nil {
			return err
		}
		sigkills++
		_ = os.Remove(marker)
		_, err := cl.startWorker()
		return err
	}
	for round, stage := range rounds {
		if err := setArm(stage); err != nil { // before the records: the batch may start at once
			return err
		}
		var pid int
		var seq int64
		ok := false
		for !ok && next < len(chunks)-1 { // the last chunk is produced after the rounds
			if err := produce(msgs[chunks[next][0]:chunks[next][1]]); err != nil {
				return err
			}
			next++
			// a chunk's batches are applied within seconds; only a batch
			// that leaves late keys rebuilds, and one with nothing for the
			// mirror (duplicates, tombstones) commits no mirror: then the
			// next chunk
			var at string
			pid, at, seq, ok = awaitMarker(marker, 30*time.Second)
			for ok && at == markMirrorLate {
				// a rebuild round's untimed kill after a mirror commit
				// listing late keys: its retry on the replacement
				// rebuilds those the history does not know
				if err := killWorker(pid); err != nil {
					return err
				}
				pid, at, seq, ok = awaitMarker(marker, 30*time.Second)
			}
		}
		if !ok {
			_ = setArm("none")
			missed = append(missed, fmt.Sprintf("round %d: no %s crash point before the stream's end", round+1, stage))
			continue
		}
		before, err := tableStatus(ctx, c, spec.Table)
		if err != nil {
			return fmt.Errorf("round %d: status before the kill: %w", round+1, err)
		}
		t0 := time.Now()
		_ = setArm("none")
		if err := killWorker(pid); err != nil {
			return err
		}
		var rec time.Duration
		for {
			if st, err := tableStatus(ctx, c, spec.Table); err == nil && recovered(stage, seq, before, st) {
				rec = time.Since(t0)
				break
			}
			if time.Since(t0) > 5*time.Minute {
				return fmt.Errorf("round %d (%s, batch %d): the killed work was not done within 5 minutes of the kill", round+1, stage, seq)
			}
			time.Sleep(100 * time.Millisecond)
		}
		done = append(done, kill{stage: stage, seq: seq, recovery: rec})
		fmt.Printf("kill %2d  %-13s batch %4d  pid %7d  recovered in %6.2f s\n", len(done), stage, seq, pid, rec.Seconds())
	}

	// the rest, then the checks
	for ; next < len(chunks); next++ {
		if err := produce(msgs[chunks[next][0]:chunks[next][1]]); err != nil {
			return err
		}
	}
	ends, err := kc.EndOffsets(ctx, spec.Topic)
	if err != nil {
		return err
	}
	st, err := awaitCaughtUp(ctx, c, spec.Table, lake.Offsets(ends), 10*time.Minute)
	if err != nil {
		return err
	}
	divergence, err := diverged(ctx, cat, name, stream.Expected(), lake.Offsets(ends))
	if err != nil {
		return err
	}
	vres, err := validateTable(ctx, c, spec)
	if err != nil {
		return err
	}
	for _, ch := range vres.Checks {
		if ch.Verdict == validate.Fail {
			divergence = append(divergence, fmt.Sprintf("validation check %s (%s) failed: expected %s, observed %s", ch.Check, ch.Scope, ch.Expected, ch.Observed))
		}
	}
	report(done, sigkills, missed, divergence, st, vres)
	if len(divergence) > 0 || len(missed) > 0 {
		return fmt.Errorf("%d divergences", len(divergence))
	}
	return nil
}

// schedule returns the stage of each of kills rounds, cycling through
// the stages, and the stream of n messages cut into kills+1 chunks: one
// per round and the last, produced after the rounds (a round whose crash
// point its chunk does not reach takes the next chunk too).
func schedule(n, kills int) (stages []string, chunks [][2]int) {
	all := []string{stageBeforeBronze, stageBronze, stageMirror, stageRebuild}
	for i := range kills {
		stages = append(stages, all[i%len(all)])
	}
	for i := range kills + 1 {
		chunks = append(chunks, [2]int{n * i / (kills + 1), n * (i + 1) / (kills + 1)})
	}
	return stages, chunks
}

// awaitMarker waits up to d for the crash point's marker and returns the
// stopped worker's pid, the stage its marker names and the batch seq.
func awaitMarker(path string, d time.Duration) (pid int, stage string, seq int64, ok bool) {
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if b, err := os.ReadFile(path); err == nil {
			if n, _ := fmt.Sscanf(string(b), "%d %s %d", &pid, &stage, &seq); n == 3 {
				return pid, stage, seq, true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return 0, "", 0, false
}

// tableStatus queries the table workflow's status (at most 5 s: a query
// waits for a workflow task, which a dead worker's sticky queue holds
// for up to the sticky schedule-to-start timeout).
func tableStatus(ctx context.Context, c client.Client, table string) (workflows.Status, error) {
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var st workflows.Status
	v, err := c.QueryWorkflow(qctx, workflows.WorkflowID(table), "", workflows.QueryStatus)
	if err == nil {
		err = v.Get(&st)
	}
	return st, err
}

// recovered reports whether the work killed at stage (batch seq) is
// done in st: for the batch stages the workflow recorded batch seq (or a
// later one) as applied, that is its bronze, mirror and history commits
// all made; for a rebuild (started after batch seq) the workflow recorded
// a rebuild result other than before's, or applied a later batch. A batch
// or rebuild with nothing for the history table commits no Iceberg
// snapshot there, so the history table's snapshots cannot tell.
func recovered(stage string, seq int64, before, st workflows.Status) bool {
	last := int64(-1)
	if st.LastBatch != nil {
		last = st.LastBatch.BatchSeq
	}
	if stage != stageRebuild {
		return last >= seq
	}
	return last > seq || st.Totals.RebuiltKeys != before.Totals.RebuiltKeys ||
		fmt.Sprint(st.LastRebuild) != fmt.Sprint(before.LastRebuild)
}

// awaitCaughtUp waits until the table's offsets reach ends with no late
// keys pending, and returns its status.
func awaitCaughtUp(ctx context.Context, c client.Client, table string, ends lake.Offsets, d time.Duration) (workflows.Status, error) {
	deadline := time.Now().Add(d)
	for {
		var st workflows.Status
		v, err := c.QueryWorkflow(ctx, workflows.WorkflowID(table), "", workflows.QueryStatus)
		if err == nil {
			err = v.Get(&st)
		}
		if err == nil {
			if st.Phase == workflows.PhaseBlocked {
				return st, fmt.Errorf("table blocked: %s", st.LastError)
			}
			caught := true
			for p, e := range ends {
				caught = caught && st.Offsets[p] >= e
			}
			if caught {
				return st, nil
			}
		}
		if time.Now().After(deadline) {
			return st, fmt.Errorf("not caught up within %s: offsets %v, want %v (last error %v)", d, st.Offsets, ends, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// validateTable runs the product's validation workflow on the table.
func validateTable(ctx context.Context, c client.Client, spec activities.TableSpec) (activities.ValidationResult, error) {
	var res activities.ValidationResult
	run, err := c.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.ValidationWorkflowID(spec.Table, time.Now()),
		TaskQueue: activities.TaskQueue}, workflows.ValidationWorkflowName, spec)
	if err != nil {
		return res, err
	}
	err = run.Get(ctx, &res)
	return res, err
}

// diverged compares the mirror with the expected rows (every column)
// and bronze with the topic (each offset once); it returns the
// differences.
func diverged(ctx context.Context, cat catalog.Catalog, name lake.TableName, want []sample.Row, ends lake.Offsets) ([]string, error) {
	var out []string
	mirror, err := cat.LoadTable(ctx, name.Mirror())
	if err != nil {
		return nil, err
	}
	rows, _, err := lake.ReadRows(ctx, mirror, []string{"order_id"})
	if err != nil {
		return nil, err
	}
	if len(rows) != len(want) {
		out = append(out, fmt.Sprintf("mirror has %d rows, want %d", len(rows), len(want)))
	}
	ts := func(us int64) string { return time.UnixMicro(us).UTC().Format("2006-01-02T15:04:05.000000Z07:00") }
	for i := 0; i < min(len(rows), len(want)); i++ {
		w, g := want[i], rows[i]
		exp := map[string]any{"order_id": w.OrderID, "_is_deleted": w.Deleted, "_seq": w.Seq.Hex(), "_source_ts": ts(w.SourceTsMicros)}
		if w.Status != "" {
			note := any(nil)
			if w.Note != nil {
				note = *w.Note
			}
			exp["customer"], exp["status"], exp["amount"], exp["note"], exp["updated_at"] = w.Customer, w.Status, w.Amount, note, ts(w.UpdatedAtMicros)
		}
		for _, k := range slices.Sorted(maps.Keys(exp)) {
			if fmt.Sprint(g[k]) != fmt.Sprint(exp[k]) {
				out = append(out, fmt.Sprintf("mirror order_id %d: %s = %v, want %v", w.OrderID, k, g[k], exp[k]))
			}
		}
	}
	bronze, err := cat.LoadTable(ctx, name.Bronze())
	if err != nil {
		return nil, err
	}
	brows, _, err := lake.ReadRows(ctx, bronze, []string{lakecat.BronzePartition, lake.BronzeOffset})
	if err != nil {
		return nil, err
	}
	var wantOffsets, got []string
	for _, p := range ends.SortedPartitions() {
		for o := int64(0); o < ends[p]; o++ {
			wantOffsets = append(wantOffsets, fmt.Sprintf("%d/%d", p, o))
		}
	}
	for _, row := range brows {
		got = append(got, fmt.Sprintf("%v/%v", row[lakecat.BronzePartition], row[lake.BronzeOffset]))
	}
	if !slices.Equal(got, wantOffsets) {
		out = append(out, fmt.Sprintf("bronze holds %d records, want each of %d offsets once", len(got), len(wantOffsets)))
	}
	return out, nil
}

// report prints the kills, the recovery times and the checks.
func report(done []kill, sigkills int, missed, divergence []string, st workflows.Status, vres activities.ValidationResult) {
	var recs []time.Duration
	byStage := map[string]int{}
	for _, k := range done {
		recs = append(recs, k.recovery)
		byStage[k.stage]++
	}
	slices.Sort(recs)
	fmt.Printf("kills: %d timed (%s %d, %s %d, %s %d, %s %d); SIGKILLs %d (a rebuild round may also kill after a mirror commit listing late keys)\n", len(done), stageBeforeBronze, byStage[stageBeforeBronze],
		stageBronze, byStage[stageBronze], stageMirror, byStage[stageMirror], stageRebuild, byStage[stageRebuild], sigkills)
	if len(recs) > 0 {
		fmt.Printf("recovery (kill -> the killed batch or rebuild done): median %.2f s, max %.2f s, min %.2f s\n",
			median(recs).Seconds(), recs[len(recs)-1].Seconds(), recs[0].Seconds())
	}
	for _, m := range missed {
		fmt.Println("skipped:", m)
	}
	fmt.Printf("table: batches %d, hand-overs %d, heartbeats lost %d, claims %d, rebuilt keys %d\n",
		st.Totals.Batches, st.HandOvers, st.HeartbeatsLost, st.Claims, st.Totals.RebuiltKeys)
	fmt.Printf("validation: %d checks, %d failed\n", len(vres.Checks), vres.Failed)
	fmt.Printf("divergence: %d\n", len(divergence))
	for _, d := range divergence {
		fmt.Println("  ", d)
	}
}

// median of sorted durations.
func median(d []time.Duration) time.Duration {
	n := len(d)
	if n%2 == 1 {
		return d[n/2]
	}
	return (d[n/2-1] + d[n/2]) / 2
}
