package lake

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/scd2"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
	"github.com/lakemirror/lakemirror/internal/merge"
	"github.com/lakemirror/lakemirror/internal/validate"
)

// The re-apply check (docs/validation.md, check reapply): the batches
// a mirror committed last are applied again, from bronze, through a
// mirror writer of its own into a scratch table seeded with the mirror's
// rows as they were before those batches, and the scratch table is
// compared row by row with the mirror after them. This file finds the
// range, seeds and drops the scratch table and reads both sides; the
// activity (activities/reapply.go) decodes and applies, and
// validate.Reapply compares.

// ReapplyBatch is one mirror batch commit to re-apply: its Iceberg
// snapshot and the batch as the pipeline applied it (its ranges run
// from the previous batch commit's end offsets to its own).
type ReapplyBatch struct {
	Snapshot int64
	Batch    Batch
}

// ReapplyPlan is the range a re-apply covers: the mirror's Iceberg
// snapshot to seed the scratch table from (Base, a batch commit) and the
// batch commits after it, oldest first, the last of which (Target) the
// scratch table is compared with.
type ReapplyPlan struct {
	Base    int64
	Target  int64
	Batches []ReapplyBatch
}

// PlanReapply finds the newest run of at most maxBatches stream batch
// commits on the mirror's current ancestry that follow one another with
// nothing else between them but compactions (Iceberg "replace"
// snapshots, which change no row), and the batch commit before them as
// the base. A stream batch commit is a snapshot whose summary carries a
// batch sequence and end offsets for topic and no load cursor. A batch
// commit whose end offsets are not beyond the previous one's is a
// backfill (it re-applied offsets below the position): it can be the
// base, but no earlier commit can. Anything else (a direct load
// or repair, a tombstone purge, a late-key rebuild, a batch of another
// topic) ends the run: the scratch table could not reproduce it from
// bronze's stream records. It returns nil and the reason when there is
// no such run (fewer than two batch commits in a row). Errors: a summary
// whose bookkeeping does not parse.
func PlanReapply(tbl *table.Table, topic string, maxBatches int) (*ReapplyPlan, string, error) {
	cur := tbl.CurrentSnapshot()
	if cur == nil {
		return nil, "the mirror has no Iceberg snapshot", nil
	}
	var run []ReapplyBatch // newest first
	why := ""
	for _, s := range lakecat.Ancestors(tbl, cur.SnapshotID) {
		if s.Summary != nil && s.Summary.Operation == table.OpReplace {
			continue
		}
		var props iceberg.Properties
		if s.Summary != nil {
			props = s.Summary.Properties
		}
		cp, ok, err := lakecat.CheckpointFrom(props)
		if err != nil {
			return nil, "", err
		}
		if !ok || props[PropLoadCursor] != "" || props[lakecat.PropTopic] != topic || len(cp.EndOffsets) == 0 {
			why = fmt.Sprintf("Iceberg snapshot %d is not a batch of topic %s (%s)", s.SnapshotID, topic, commitKind(props))
			break
		}
		if n := len(run); n > 0 && !advances(cp.EndOffsets, run[n-1].Batch.EndOffsets) {
			// a backfill: its own state seeds the scratch table, but its
			// records lie below the offsets the batch before it ended at
			why = fmt.Sprintf("batch %d (Iceberg snapshot %d) re-applied offsets below the position (a backfill)", run[n-1].Batch.Seq, run[n-1].Snapshot)
			break
		}
		run = append(run, ReapplyBatch{Snapshot: s.SnapshotID, Batch: Batch{ID: cp.BatchID, Seq: cp.BatchSeq, Topic: topic, EndOffsets: cp.EndOffsets}})
		if len(run) > maxBatches {
			break
		}
	}
	if len(run) < 2 {
		if why == "" {
			why = "the mirror's retained ancestry holds fewer than two batch commits"
		}
		return nil, "no batch to re-apply: " + why, nil
	}
	slices.Reverse(run)
	plan := &ReapplyPlan{Base: run[0].Snapshot, Target: run[len(run)-1].Snapshot}
	prev := run[0].Batch.EndOffsets
	for _, b := range run[1:] {
		for _, p := range b.Batch.EndOffsets.SortedPartitions() {
			if from := prev[p]; b.Batch.EndOffsets[p] > from {
				b.Batch.Ranges = append(b.Batch.Ranges, Range{Partition: p, From: from, To: b.Batch.EndOffsets[p]})
			}
		}
		plan.Batches = append(plan.Batches, b)
		prev = b.Batch.EndOffsets
	}
	return plan, "", nil
}

// advances reports whether end offsets to are at or beyond from in every
// partition and beyond it in one.
func advances(from, to Offsets) bool {
	ahead := false
	for p, o := range from {
		if to[p] < o {
			return false
		}
	}
	for p, o := range to {
		if o > from[p] {
			ahead = true
		}
	}
	return ahead
}

// commitKind names what a non-batch mirror commit was, from its summary.
func commitKind(props iceberg.Properties) string {
	switch {
	case props[PropLoadCursor] != "":
		return "a direct load or repair"
	case props["lakemirror.maintenance"] != "":
		return props["lakemirror.maintenance"]
	case props["lakemirror.rebuild-keys"] != "":
		return "a late-key rebuild"
	case props[lakecat.PropTopic] != "":
		return "a batch of topic " + props[lakecat.PropTopic]
	}
	return "not written by a batch"
}

// PropScratchOf marks a scratch table with the table it copies; only
// tables carrying it are ever dropped as scratch tables.
const PropScratchOf = "lakemirror.scratch-of"

// DropStaleScratch drops the scratch tables of table name (those named
// <table>_reapply_… whose lakemirror.scratch-of is name) not updated
// for at least olderThan, with their files: what attempts left that
// died or were abandoned between seeding and dropping. It returns how
// many it dropped. Errors: catalog failures.
func DropStaleScratch(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, olderThan time.Duration, now time.Time) (int, error) {
	var stale []lakecat.TableName
	for ident, err := range cat.ListTables(ctx, name.NamespaceIdent()) {
		if err != nil {
			return 0, fmt.Errorf("lake: list tables of %s: %w", name.Namespace, err)
		}
		n := ident[len(ident)-1]
		if !strings.HasPrefix(n, name.Name+lakecat.ScratchInfix) {
			continue
		}
		sc := lakecat.TableName{Namespace: name.Namespace, Name: n}
		tbl, err := lakecat.LoadTable(ctx, cat, sc.Mirror())
		if err != nil {
			return 0, err
		}
		if tbl == nil || tbl.Properties()[PropScratchOf] != name.String() ||
			now.Sub(time.UnixMilli(tbl.Metadata().LastUpdatedMillis())) < olderThan {
			continue
		}
		stale = append(stale, sc)
	}
	for _, sc := range stale {
		if err := DropScratch(ctx, cat, sc); err != nil {
			return 0, err
		}
	}
	return len(stale), nil
}

// scratchDropped are the mirror properties a scratch table does not
// copy: the batch bookkeeping (the re-applied batches must not look
// committed) and the purge state (the scratch table has no purged-keys
// table; purged keys are left out of the comparison instead).
var scratchDropped = []string{lakecat.PropBatchID, lakecat.PropBatchSeq, lakecat.PropEndOffsets, lakecat.PropBatchResult, lakecat.PropBatchTally, PropLoadCursor,
	PropAppliedPosition, lakecat.PropReadPosition, lakecat.PropFetchedPast, lakecat.PropNewestTx, PropPurgeHorizon, PropPurgeLegacy, PropLastPurge, scd2.PropPendingRebuild}

// SeedScratch (re)creates the scratch table with the mirror's schema,
// partition spec and properties (less scratchDropped) and fills it with
// the mirror's rows at Iceberg snapshot base (soft-deleted rows
// included), written as new files of its own: the scratch table shares
// no file with the mirror, so dropping it with its files never touches
// the mirror's. Cost: one read of the mirror at base and one write of
// as many rows, streamed (one record batch in memory). Errors: catalog
// and file IO failures.
func SeedScratch(ctx context.Context, cat catalog.Catalog, name, scratch lakecat.TableName, base int64) error {
	if err := DropScratch(ctx, cat, scratch); err != nil {
		return err
	}
	mirror, err := lakecat.LoadTable(ctx, cat, name.Mirror())
	if err != nil {
		return err
	}
	if mirror == nil {
		return fmt.Errorf("lake: no mirror %s", name)
	}
	props := maps.Clone(mirror.Properties())
	for _, k := range scratchDropped {
		delete(props, k)
	}
	props[PropScratchOf] = name.String()
	opts := []catalog.CreateTableOpt{catalog.WithProperties(props)}
	if spec := mirror.Spec(); !spec.IsUnpartitioned() {
		opts = append(opts, catalog.WithPartitionSpec(&spec))
	}
	sc, err := cat.CreateTable(ctx, scratch.Mirror(), mirror.Schema(), opts...)
	if err != nil {
		return fmt.Errorf("lake: create scratch table %s: %w", scratch, err)
	}
	arrowSchema, it, err := mirror.Scan(table.WithSnapshotID(base)).ToArrowRecords(ctx)
	if err != nil {
		return fmt.Errorf("lake: scan %s at Iceberg snapshot %d: %w", name, base, err)
	}
	rdr := array.ReaderFromIter(arrowSchema, it) // one record batch in memory at a time
	defer rdr.Release()
	tx := sc.NewTransaction()
	if err := tx.Append(ctx, rdr, iceberg.Properties{"lakemirror.seeded-from": fmt.Sprint(base)}); err != nil {
		return fmt.Errorf("lake: seed scratch table %s: %w", scratch, err)
	}
	if err := rdr.Err(); err != nil {
		return fmt.Errorf("lake: scan %s at Iceberg snapshot %d: %w", name, base, err)
	}
	if _, err := lakecat.CommitTx(ctx, sc, tx); err != nil {
		return fmt.Errorf("lake: seed scratch table %s: %w", scratch, err)
	}
	return nil
}

// DropScratch drops a scratch table and deletes its files, if it exists.
// It refuses a table that is not a scratch table (no
// lakemirror.scratch-of property). Errors: catalog failures.
func DropScratch(ctx context.Context, cat catalog.Catalog, scratch lakecat.TableName) error {
	tbl, err := lakecat.LoadTable(ctx, cat, scratch.Mirror())
	if err != nil || tbl == nil {
		return err
	}
	if tbl.Properties()[PropScratchOf] == "" {
		return fmt.Errorf("lake: %s is not a scratch table; not dropping it", scratch)
	}
	if p, ok := cat.(interface {
		PurgeTable(context.Context, table.Identifier) error
	}); ok {
		err = p.PurgeTable(ctx, scratch.Mirror())
	} else if err = cat.DropTable(ctx, scratch.Mirror()); err == nil {
		err = tbl.PurgeFiles(ctx)
	}
	lakecat.CacheTable(ctx, scratch.Mirror(), nil)
	if err != nil && !errors.Is(err, catalog.ErrNoSuchTable) {
		return fmt.Errorf("lake: drop scratch table %s: %w", scratch, err)
	}
	return nil
}

// ReadImages reads a mirror-shaped table (ident) at Iceberg snapshot
// snapshotID (0: the current one) into one validate.Image per key (hex
// of the encoded primary key of keyCols): `_seq`, soft-delete flag and
// merge.RowHash of the source columns. dups lists the keys the table
// holds more than one row of (their image is one of them). Memory: about
// 150 bytes per row. Errors: catalog and file IO failures, a key that
// cannot be encoded.
func ReadImages(ctx context.Context, cat catalog.Catalog, ident table.Identifier, snapshotID int64, keyCols []string) (images map[string]validate.Image, dups []string, err error) {
	tbl, err := lakecat.LoadTable(ctx, cat, ident)
	if err != nil {
		return nil, nil, err
	}
	images = map[string]validate.Image{}
	if tbl == nil || tbl.CurrentSnapshot() == nil {
		return images, nil, nil
	}
	err = tableread.ScanRows(ctx, tbl, snapshotID, func(r tableread.MirrorRow) error {
		k, err := cdc.KeyOf(r.Row, keyCols)
		if err != nil {
			return fmt.Errorf("lake: %s: %w", lakecat.IdentString(ident), err)
		}
		hk := hex.EncodeToString([]byte(k))
		if _, dup := images[hk]; dup {
			dups = append(dups, hk)
		}
		images[hk] = validate.Image{Seq: r.Seq, Deleted: r.Deleted, Digest: merge.RowHash(r.Row, nil)}
		return nil
	})
	return images, dups, err
}

// ReadBronzeRange calls fn with the bronze records of topic in the given
// ranges (per partition [From, To)), the keyless ones (tombstones,
// truncates) included, a file at a time. Files are pruned by their
// manifest bounds on kafka_offset. Errors: catalog and file IO failures,
// a bronze file with delete files, a `_key` that is not hex, fn's.
func ReadBronzeRange(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, topic string, ranges []Range, fn func([]BronzeRow) error) error {
	if len(ranges) == 0 {
		return nil
	}
	lo, hi := ranges[0].From, ranges[0].To
	for _, r := range ranges {
		lo, hi = min(lo, r.From), max(hi, r.To)
	}
	filter := iceberg.NewAnd(iceberg.GreaterThanEqual(iceberg.Reference(lakecat.BronzeOffset), lo), iceberg.LessThan(iceberg.Reference(lakecat.BronzeOffset), hi))
	keep := func(t string, p int32, o int64, _ string, _ bool) bool {
		if t != topic {
			return false
		}
		for _, r := range ranges {
			if r.Partition == p && o >= r.From && o < r.To {
				return true
			}
		}
		return false
	}
	return tableread.EachBronzeFile(ctx, cat, name, filter, fmt.Sprintf("of offsets [%d, %d)", lo, hi), keep, func(rows []BronzeRow) error {
		if len(rows) == 0 {
			return nil
		}
		return fn(rows)
	})
}
