package maintain

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/internal/retention"
)

// Bronze retention (docs/design.md, "Bronze retention").
const (
	// PropTrimmedBefore, on bronze and the quarantine: the newest cutoff
	// a retention run dropped files below (RFC 3339, UTC, µs): every
	// record ingested before it may be gone, none after it is. Absent:
	// nothing was ever dropped.
	PropTrimmedBefore = "lakemirror.trimmed-before"
	// PropLastTrim: the last retention run that dropped files, as
	// payload.TrimResult JSON.
	PropLastTrim = "lakemirror.last-trim"
)

// TrimBronze drops from the table's bronze and quarantine tables every
// data file whose records were all ingested before now − keep
// (retention.Decide: a day partition of `_ingested_at` that ended by
// then, or a file without one whose newest `_ingested_at` is older), in
// one delete commit per table that rewrites nothing, and records the
// cutoff on the table (PropTrimmedBefore, PropLastTrim). A table that
// does not exist is left out of the result; one with nothing to drop is
// reported and left as it is. Errors: retention.Check's (keep below a
// day), catalog, planning and commit errors (a conflict with a batch's
// commit is retried by the caller).
func TrimBronze(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, keep time.Duration, now time.Time) (map[string]payload.TrimResult, error) {
	if keep <= 0 {
		return nil, errors.New("lake: bronze retention: no retention given (0 keeps bronze for ever)")
	}
	if err := retention.Check(keep); err != nil {
		return nil, err
	}
	out := map[string]payload.TrimResult{}
	for _, t := range []struct {
		kind  string
		ident table.Identifier
	}{{"bronze", name.Bronze()}, {"quarantine", name.Quarantine()}} {
		tbl, err := lakecat.LoadTable(ctx, cat, t.ident)
		if err != nil {
			return out, err
		}
		if tbl == nil {
			continue
		}
		res, err := trimIngested(ctx, tbl, keep, now)
		if err != nil {
			return out, err
		}
		out[t.kind] = res
	}
	return out, nil
}

// trimIngested is TrimBronze for one table.
func trimIngested(ctx context.Context, tbl *table.Table, keep time.Duration, now time.Time) (payload.TrimResult, error) {
	cutoff := retention.Cutoff(now, keep)
	res := payload.TrimResult{Retention: keep, Cutoff: cutoff.Format(time.RFC3339Nano), At: now.UTC().Format(time.RFC3339Nano)}
	if tbl.CurrentSnapshot() == nil {
		return res, nil
	}
	field, ok := tbl.Schema().FindFieldByName(lakecat.ColIngestedAt)
	if !ok {
		return res, fmt.Errorf("lake: %s has no %s column to keep a retention by", lakecat.IdentString(tbl.Identifier()), lakecat.ColIngestedAt)
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return res, fmt.Errorf("lake: plan %s for retention: %w", lakecat.IdentString(tbl.Identifier()), err)
	}
	specs := map[int]iceberg.PartitionSpec{}
	for _, s := range tbl.Metadata().PartitionSpecs() {
		specs[s.ID()] = s
	}
	var drop []iceberg.DataFile
	dropped := map[string]bool{}
	users := map[string][]string{} // delete file path → the data files it applies to
	deletes := map[string]iceberg.DataFile{}
	for _, t := range tasks {
		spec := specs[int(t.File.SpecID())]
		f := ingestedFile(t.File, &spec, field.ID)
		switch retention.Decide(f, cutoff) {
		case retention.Drop:
			drop = append(drop, t.File)
			dropped[t.File.FilePath()] = true
			res.FilesDropped++
			res.RowsDropped += t.File.Count()
		case retention.KeepUnknown:
			res.FilesUnknown++
			fallthrough
		default:
			res.FilesKept++
			res.RowsKept += t.File.Count()
		}
		for _, d := range t.DeleteFiles {
			users[d.FilePath()] = append(users[d.FilePath()], t.File.FilePath())
			deletes[d.FilePath()] = d
		}
	}
	if len(drop) == 0 {
		return res, nil
	}
	var removeDeletes []iceberg.DataFile
	for _, path := range slices.Sorted(maps.Keys(users)) {
		all := true
		for _, u := range users[path] {
			all = all && dropped[u]
		}
		if all {
			removeDeletes = append(removeDeletes, deletes[path])
		}
	}
	res.DeleteFiles = len(removeDeletes)
	trimmedBefore := res.Cutoff
	if prev, err := TrimmedBefore(tbl); err == nil && prev.After(cutoff) {
		trimmedBefore = prev.Format(time.RFC3339Nano) // a run with a longer retention keeps the older cutoff's loss on record
	}
	last, _ := json.Marshal(res)
	tx := tbl.NewTransaction()
	summary := iceberg.Properties{"lakemirror.maintenance": "retention", "lakemirror.retention-cutoff": res.Cutoff}
	if err := tx.ReplaceFiles(ctx, drop, nil, removeDeletes, summary); err != nil {
		return res, fmt.Errorf("lake: stage the retention drop of %s: %w", lakecat.IdentString(tbl.Identifier()), err)
	}
	if err := tx.SetProperties(iceberg.Properties{PropTrimmedBefore: trimmedBefore, PropLastTrim: string(last)}); err != nil {
		return res, err
	}
	committed, err := lakecat.CommitTx(ctx, tbl, tx)
	if err != nil {
		return res, fmt.Errorf("lake: commit the retention drop of %s: %w", lakecat.IdentString(tbl.Identifier()), err)
	}
	if s := committed.CurrentSnapshot(); s != nil {
		res.SnapshotID = s.SnapshotID
	}
	return res, nil
}

// ingestedFile is what retention.Decide needs of a data file: the end of
// its time partition on the ingestion column (fieldID), else its upper
// bound on it.
func ingestedFile(df iceberg.DataFile, spec *iceberg.PartitionSpec, fieldID int) retention.File {
	var f retention.File
	vals := df.Partition()
	for _, pf := range spec.Fields() {
		if pf.SourceID() != fieldID {
			continue
		}
		v, ok := partitionInt(vals[pf.FieldID])
		if !ok {
			continue
		}
		if end, ok := retention.PartitionEnd(pf.Transform.String(), v); ok {
			f.Partitioned, f.PartitionEnd = true, end
			return f
		}
	}
	if b, ok := df.UpperBoundValues()[fieldID]; ok && len(b) == 8 {
		f.HasBound, f.MaxIngested = true, time.UnixMicro(int64(binary.LittleEndian.Uint64(b))).UTC()
	}
	return f
}

// partitionInt reads a time transform's partition value (iceberg.Date
// for day, int32 for the others, as the manifests give them).
func partitionInt(v any) (int32, bool) {
	switch x := v.(type) {
	case iceberg.Date:
		return int32(x), true
	case int32:
		return x, true
	case int64:
		return int32(x), true
	case int:
		return int32(x), true
	}
	return 0, false
}

// TrimmedBefore is the cutoff a retention run last recorded on tbl
// (PropTrimmedBefore), or the zero time when nothing was ever dropped.
// Errors: a malformed property.
func TrimmedBefore(tbl *table.Table) (time.Time, error) {
	s, ok := tbl.Properties()[PropTrimmedBefore]
	if !ok || s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("lake: %s %s=%q: %w", lakecat.IdentString(tbl.Identifier()), PropTrimmedBefore, s, err)
	}
	return t, nil
}

// LastTrim is the last retention run that dropped files of tbl
// (PropLastTrim), and false when there was none.
func LastTrim(tbl *table.Table) (payload.TrimResult, bool) {
	var r payload.TrimResult
	s, ok := tbl.Properties()[PropLastTrim]
	if !ok || json.Unmarshal([]byte(s), &r) != nil {
		return r, false
	}
	return r, true
}
