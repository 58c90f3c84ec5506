package activities

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
	"github.com/lakemirror/lakemirror/internal/lake/validation"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/source"
	"github.com/lakemirror/lakemirror/internal/validate"
)

// reconcileProgress is the heartbeat of a reconciliation: where the
// range phase stopped (the last range's last key) and what it found so
// far. A retried attempt resumes after After.
type reconcileProgress struct {
	Chunks     int                     `json:"chunks"`
	After      []lake.KeyPart          `json:"after,omitempty"`
	Done       bool                    `json:"done"`
	Candidates []candidate             `json:"candidates,omitempty"`
	Scope      validate.ReconcileScope `json:"scope"`
}

// candidate is a key the range phase found differing, to re-read.
type candidate struct {
	Key  string         `json:"key"` // hex of the encoded key
	Vals []lake.KeyPart `json:"vals"`
}

// maxCandidates caps the keys one run re-reads and reports; more are
// counted in the scope but not named.
const maxCandidates = 10_000

// maxReportedDiffs caps ReconcileResult.Diffs.
const maxReportedDiffs = 1000

// reconcileHook, when set (tests), runs after the range phase ("ranges")
// and after the re-read of the candidates ("reread").
var reconcileHook func(stage string)

// lateSample is how many of bronze's newest stream records the settling
// period is measured over.
const lateSample = 10_000

// mirrorEntry is the first mirror read's view of a key.
type mirrorEntry struct {
	state   validate.RowState
	matched bool
}

// Reconcile compares a table's mirror with its source database and
// writes one row per check to <ns>.<table>_validation.
//
// Ranges: the source table is read in key order, req.Chunk rows per
// range, each in its own REPEATABLE READ READ ONLY transaction with its
// position, pausing req.Pause between ranges, heartbeating the last key
// (a retry resumes there). Each range's count and order-independent
// checksum (sum of per-row digests: merge.RowHash of the source's
// columns the mirror has) is compared with the mirror's over the same
// keys (read once, before the ranges); a range that differs is diffed
// key by key, and the mirror's live keys no range returned are
// candidate ghost rows.
//
// Settling: before it compares, the run waits until the mirror has
// applied every change committed before the source read: the settling
// period (validate.Settling over bronze's recent
// source-commit-to-apply delays) after the read has passed, and either
// the mirror's applied position is at or above the read's position or
// the table's Kafka position has reached the topic's end offsets as
// they were then. The candidates are read again from the source by key
// at a new position, the run waits for the mirror to pass that one, and
// only keys that still differ there, with a mirror row at or below the
// read position, are reported (validate.Recheck): a row changed at the
// source after the watermark is either applied by then or above the
// read, and never reported.
//
// With req.Repair the reported keys are written as repair events at the
// re-read's position (source.Renderer.RepairValue) through the normal
// apply path (bronze topic "<topic>#reconcile-<run>", guarded merge), so
// a newer streamed change still wins.
//
// Memory: the mirror's keys with a digest and `_seq` (about 100 bytes a
// key), one range, bronze's row changes. Errors: a bad spec or source
// table (non-retryable), source, catalog, storage and Kafka failures
// and a mirror that did not catch up within req.CatchUpTimeout
// (retried).
func (a *Activities) Reconcile(ctx context.Context, req ReconcileRequest) (ReconcileResult, error) {
	spec := req.Spec.Defaults()
	res := ReconcileResult{Table: spec.Table, RunID: req.RunID, CheckedAt: time.Now().UTC()}
	name, err := lake.ParseTableName(spec.Table)
	if err != nil {
		return res, badSpec(err)
	}
	if err := a.checkCatalog(spec); err != nil {
		return res, err
	}
	req = reconcileDefaults(req, spec)
	src, info, err := a.openSource(ctx, spec, req.Source, req.SourceTable)
	if err != nil {
		return res, err
	}
	defer src.Close()
	var prog reconcileProgress
	if activity.IsActivity(ctx) && activity.HasHeartbeatDetails(ctx) {
		_ = activity.GetHeartbeatDetails(ctx, &prog)
	}
	// the background heartbeat sends the last progress the loop published
	var mu sync.Mutex
	published := prog
	publish := func() {
		mu.Lock()
		defer mu.Unlock()
		published = prog
		published.Candidates = slices.Clone(prog.Candidates)
		published.After = slices.Clone(prog.After)
	}
	stop := keepAlive(ctx, 10*time.Second, func() any {
		mu.Lock()
		defer mu.Unlock()
		return published
	})
	defer stop()

	// settling period, from bronze's measured lateness
	var bronze *tableread.BronzeChanges
	if !spec.WithoutBronze {
		if bronze, err = tableread.ReadBronzeChanges(ctx, a.Catalog, name, spec.Topic, lateSample); err != nil {
			return res, err
		}
	}
	var delays []time.Duration
	if bronze != nil {
		delays = bronze.Delays
	}
	res.Settling, res.MeasuredP99 = validate.Settling(delays, max(req.SettleFloor, 0), req.SettleCeiling)

	// the first mirror read
	r := &reconciler{a: a, req: req, spec: spec, name: name, info: info, src: src}
	mirror, compared, err := r.readMirror(ctx)
	if err != nil {
		return res, err
	}
	r.compared = compared

	// ranges
	prog.Scope.SourceTable, prog.Scope.Settling = req.SourceTable, res.Settling
	after := (&lake.LoadCursor{After: prog.After}).Values()
	for !prog.Done {
		rows, last, _, err := src.ReadChunkAt(ctx, info, after, req.Chunk)
		if err != nil {
			return res, sourceError(err)
		}
		if len(rows) == 0 {
			prog.Done = true
			break
		}
		var stat validate.RangeStat
		var diffs []candidate
		for _, row := range rows {
			key, digest, err := r.keyAndDigest(row)
			if err != nil {
				return res, err
			}
			stat.Source.Add(digest)
			e := mirror[key]
			var mst *validate.RowState
			if e != nil {
				e.matched = true
				mst = &e.state
				if !e.state.Deleted {
					stat.Mirror.Add(e.state.Digest)
				}
			}
			if validate.Classify(&validate.RowState{Digest: digest}, mst) != "" {
				diffs = append(diffs, candidate{Key: key, Vals: lake.KeyParts(r.keyVals(row))})
			}
		}
		prog.Chunks++
		prog.Scope.Ranges++
		prog.Scope.SourceRows += int64(len(rows))
		if stat.Differs() {
			prog.Scope.DifferedRanges++
			for _, c := range diffs {
				if len(prog.Candidates) < maxCandidates {
					prog.Candidates = append(prog.Candidates, c)
				}
			}
		}
		prog.After = lake.KeyParts(last)
		after = last
		publish()
		if activity.IsActivity(ctx) {
			activity.RecordHeartbeat(ctx, prog)
		}
		if len(rows) < req.Chunk {
			prog.Done = true
			break
		}
		if err := sleepCtx(ctx, req.Pause); err != nil {
			return res, err
		}
	}
	// live mirror keys no range returned: candidate ghost rows
	ghosts := map[string]bool{}
	for k, e := range mirror {
		if !e.matched && !e.state.Deleted {
			ghosts[k] = true
		}
	}
	if reconcileHook != nil {
		reconcileHook("ranges")
	}
	publish()
	out, err := r.recheck(ctx, prog.Candidates, ghosts, res.Settling)
	if err != nil {
		return res, err
	}
	prog.Scope.Rechecked, prog.Scope.Unsettled, prog.Scope.MirrorLive = out.rechecked, out.unsettled, out.live
	res.Scope = prog.Scope
	res.Diffs = out.diffs
	res.Checks = validate.Reconcile(prog.Scope, out.diffs)
	if bronze != nil {
		// bronze as of the final mirror read
		if bronze, err = tableread.ReadBronzeChanges(ctx, a.Catalog, name, spec.Topic, lateSample); err != nil {
			return res, err
		}
		loadDeleted := map[string]bool{}
		for k, seq := range out.deletedSeqs {
			if bronze.LoadSeqs[seq] {
				loadDeleted[k] = true
			}
		}
		recs, truncs := bronze.Records, bronze.Truncates
		if out.applied != "" {
			// bronze commits before the mirror: changes above the applied
			// position of the mirror read are batches it does not show yet
			recs, truncs = nil, nil
			for _, rec := range bronze.Records {
				if rec.Seq <= out.applied {
					recs = append(recs, rec)
				}
			}
			for _, t := range bronze.Truncates {
				if t <= out.applied {
					truncs = append(truncs, t)
				}
			}
		}
		res.Checks = append(res.Checks, validate.Balance(recs, truncs, out.liveKeys, loadDeleted))
	} else {
		res.Skipped = []string{validate.CheckBalance}
	}
	for _, c := range res.Checks {
		if c.Verdict == validate.Fail {
			res.Failed++
		}
	}
	if req.Repair && len(out.diffs) > 0 {
		if res.Repaired, res.RepairedAt, err = r.repair(ctx, out); err != nil {
			return res, err
		}
		res.Checks = append(res.Checks, repairResult(prog.Scope, out, res.Repaired, res.RepairedAt))
	}
	if len(res.Diffs) > maxReportedDiffs {
		res.Diffs = res.Diffs[:maxReportedDiffs]
	}
	validate.NameKeys(res.Checks, r.info.Key) // "order_id=1001", not the key's hex
	validate.NameDiffKeys(res.Diffs, r.info.Key)
	if res.Snapshot, err = validation.Append(ctx, a.Catalog, name, req.RunID, res.CheckedAt, res.Checks); err != nil {
		return res, err
	}
	if a.Metrics != nil {
		failed, counts := map[string]bool{}, map[string]int{}
		for _, c := range res.Checks {
			failed[c.Check] = c.Verdict == validate.Fail
			counts[c.Check] = c.Total
		}
		a.Metrics.ObserveValidation(spec.Table, res.CheckedAt, failed)
		a.Metrics.ObserveReconcile(spec.Table, counts, res.Settling)
	}
	return res, nil
}

// reconcileDefaults fills the request's defaults.
func reconcileDefaults(req ReconcileRequest, spec TableSpec) ReconcileRequest {
	if req.Source == "" {
		req.Source = spec.Source
	}
	if req.SourceTable == "" {
		req.SourceTable = spec.SourceTable
	}
	if req.Chunk <= 0 {
		req.Chunk = 1000
	}
	req.Chunk = min(req.Chunk, 10_000)
	if req.Pause == 0 {
		req.Pause = 100 * time.Millisecond
	}
	if req.SettleFloor == 0 {
		req.SettleFloor = 30 * time.Second
	}
	if req.SettleCeiling == 0 {
		req.SettleCeiling = time.Hour
	}
	if req.CatchUpTimeout <= 0 {
		req.CatchUpTimeout = time.Hour
	}
	return req
}

// sleepCtx sleeps d (nothing when d ≤ 0) unless ctx ends first.
func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// reconciler holds one run's source, table and the columns it compares.
type reconciler struct {
	a        *Activities
	req      ReconcileRequest
	spec     TableSpec
	name     lake.TableName
	info     source.TableInfo
	src      sourceReader
	compared []string // the source's columns the mirror has, in source order
}

// readMirror reads the mirror's rows into a map by key (hex), with the
// digest of the compared columns; it also returns those columns.
func (r *reconciler) readMirror(ctx context.Context) (map[string]*mirrorEntry, []string, error) {
	out := map[string]*mirrorEntry{}
	var compared []string
	_, err := tableread.ScanMirrorRows(ctx, r.a.Catalog, r.name, func(m tableread.MirrorRow) error {
		if compared == nil {
			compared = r.comparedColumns(m.Row.Cols)
		}
		k, err := cdc.KeyOf(m.Row, r.info.Key)
		if err != nil {
			return fmt.Errorf("reconcile: mirror row without its key: %w", err)
		}
		out[hex.EncodeToString([]byte(k))] = &mirrorEntry{state: validate.RowState{
			Digest: merge.RowHash(m.Row, compared), Seq: m.Seq, Deleted: m.Deleted}}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	if compared == nil {
		compared = r.comparedColumns(nil)
	}
	return out, compared, nil
}

// comparedColumns are the source's columns the mirror has (all of them
// when mirror is nil: an empty mirror).
func (r *reconciler) comparedColumns(mirror *cdc.Columns) []string {
	out := []string{}
	for _, c := range r.info.Columns {
		if mirror == nil || mirror.Index(c.Name) >= 0 {
			out = append(out, c.Name)
		}
	}
	return out
}

// keyAndDigest returns a source row's key (hex) and digest.
func (r *reconciler) keyAndDigest(row *cdc.Row) (string, string, error) {
	k, err := cdc.KeyOf(row, r.info.Key)
	if err != nil {
		return "", "", fmt.Errorf("reconcile: source row without its key: %w", err)
	}
	return hex.EncodeToString([]byte(k)), merge.RowHash(row, r.compared), nil
}

// keyVals returns a row's key values in key order.
func (r *reconciler) keyVals(row *cdc.Row) []cdc.Value {
	out := make([]cdc.Value, len(r.info.Key))
	for i, k := range r.info.Key {
		out[i], _ = row.Get(k)
	}
	return out
}

var errNotCaughtUp = errors.New("reconcile: the mirror did not catch up with the source read")
