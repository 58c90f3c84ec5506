package erasure

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	stdfs "io/fs"
	"maps"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/maintain"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/lake/rowdelta"
)

// The file work of an erasure (erase.go): finding the rows of the
// erased keys in data files, rewriting the current snapshot's files
// without them, and expiring the snapshots that still reach them.

// keySet recognises the erased keys by their salted hash.
type keySet struct {
	h    *keyHasher
	want map[string]bool
}

func (k *keySet) has(key cdc.Key) bool { return k.want[k.h.hash(key)] }

// hasHex is has for a key written as hex (bronze's and purged's `_key`,
// the pending-rebuild sets).
func (k *keySet) hasHex(s string) bool {
	b, err := hex.DecodeString(s)
	return err == nil && k.has(cdc.Key(b))
}

// rowAction is what an erasure does with one row.
type rowAction uint8

const (
	actKeep   rowAction = iota
	actDrop             // the row is a key's: gone
	actRedact           // a bronze record of a key: only its Kafka coordinates, timestamp and ingestion time stay
	actStrip            // a bronze record of another key whose key-change header names a key: the header goes
)

// rowMatcher decides the rows of one of the five tables.
type rowMatcher struct {
	kind    string
	keyCols []string
	ks      *keySet
	raw     RawMatcher
	vals    []cdc.Value
	buf     []byte
}

// columns are the columns the matcher reads.
func (m *rowMatcher) columns() []string {
	switch m.kind {
	case "mirror", "history":
		return append(slices.Clone(m.keyCols), lakecat.ColSeq)
	case "bronze":
		return []string{lakecat.ColKey, lakecat.BronzeKey, lakecat.BronzeValue, lakecat.BronzeHeaders, lakecat.ColSeq}
	case "purged":
		return []string{lakecat.ColKey, lakecat.ColSeq}
	}
	return []string{lakecat.BronzeKey, lakecat.BronzeValue} // quarantine
}

// actions decides every row of rec (which holds at least the matcher's
// columns, by name), and raises maxSeq to the `_seq` of each row that is
// a key's. Errors: a key column missing, values that cannot be read, a
// malformed `_seq`.
func (m *rowMatcher) actions(rec arrow.RecordBatch, acts []rowAction, maxSeq *cdc.Seq) ([]rowAction, error) {
	n := int(rec.NumRows())
	acts = slices.Grow(acts[:0], n)[:n]
	clear(acts)
	col := func(name string) arrow.Array {
		if idx := rec.Schema().FieldIndices(name); len(idx) > 0 {
			return rec.Column(idx[0])
		}
		return nil
	}
	switch m.kind {
	case "mirror", "history":
		cols := make([]arrow.Array, len(m.keyCols))
		for i, c := range m.keyCols {
			if cols[i] = col(c); cols[i] == nil {
				return nil, fmt.Errorf("lake: erase: %s rows lack key column %q", m.kind, c)
			}
		}
		m.vals = slices.Grow(m.vals[:0], len(cols))[:len(cols)]
		for r := 0; r < n; r++ {
			var err error
			for i, c := range cols {
				if m.vals[i], err = parquetio.ValueAt(c, r); err != nil {
					return nil, err
				}
			}
			if m.buf, err = cdc.EncodeKey(m.buf[:0], m.vals...); err != nil {
				return nil, err
			}
			if m.ks.has(cdc.Key(m.buf)) {
				acts[r] = actDrop
			}
		}
	case "purged":
		pk := col(lakecat.ColKey)
		for r := 0; r < n; r++ {
			if pk != nil && !pk.IsNull(r) && m.ks.hasHex(strAt(pk, r)) {
				acts[r] = actDrop
			}
		}
	case "bronze":
		pk, kk, kv, hd := col(lakecat.ColKey), col(lakecat.BronzeKey), col(lakecat.BronzeValue), col(lakecat.BronzeHeaders)
		for r := 0; r < n; r++ {
			switch {
			case pk != nil && !pk.IsNull(r):
				if m.ks.hasHex(strAt(pk, r)) {
					acts[r] = actRedact
				}
			case m.raw != nil && (notNull(kk, r) || notNull(kv, r)):
				// a record without a typed key: a tombstone, an undecodable or a quarantined record
				if m.anyKey(m.raw.RecordKeys(binAt(kk, r), binAt(kv, r))) {
					acts[r] = actRedact
				}
			}
			if acts[r] == actKeep && m.raw != nil && m.headerNamesKey(hd, r) {
				acts[r] = actStrip
			}
		}
	default: // quarantine
		kk, kv := col(lakecat.BronzeKey), col(lakecat.BronzeValue)
		for r := 0; r < n; r++ {
			if m.raw != nil && (notNull(kk, r) || notNull(kv, r)) && m.anyKey(m.raw.RecordKeys(binAt(kk, r), binAt(kv, r))) {
				acts[r] = actDrop
			}
		}
	}
	if seqs := col(lakecat.ColSeq); seqs != nil {
		for r, a := range acts {
			if a == actKeep || a == actStrip || seqs.IsNull(r) {
				continue
			}
			s, err := cdc.ParseSeqHex(strAt(seqs, r))
			if err != nil {
				return nil, fmt.Errorf("lake: erase: bad %s in %s: %w", lakecat.ColSeq, m.kind, err)
			}
			*maxSeq = max(*maxSeq, s)
		}
	}
	return acts, nil
}

func (m *rowMatcher) anyKey(keys []cdc.Key) bool {
	return slices.ContainsFunc(keys, m.ks.has)
}

// headerNamesKey reports whether row r's Kafka headers (a list of
// key/value structs) hold a key-change header naming a key.
func (m *rowMatcher) headerNamesKey(hd arrow.Array, r int) bool {
	l, ok := hd.(*array.List)
	if !ok || l.IsNull(r) {
		return false
	}
	st, ok := l.ListValues().(*array.Struct)
	if !ok || st.NumField() < 2 {
		return false
	}
	keys, vals := st.Field(0), st.Field(1)
	from, to := l.ValueOffsets(r)
	for i := int(from); i < int(to); i++ {
		if h := strAt(keys, i); h == HeaderOldKey || h == HeaderNewKey {
			if k, ok := m.raw.SerializedKey(binAt(vals, i)); ok && m.ks.has(k) {
				return true
			}
		}
	}
	return false
}

// The Kafka headers Debezium puts on the two records of a key change
// (schemas.HeaderOldKey, schemas.HeaderNewKey).
const (
	// HeaderOldKey is on the create of a key change, holding the old key.
	HeaderOldKey = "__debezium.oldkey"
	// HeaderNewKey is on the delete of a key change, holding the new key.
	HeaderNewKey = "__debezium.newkey"
)

func notNull(a arrow.Array, r int) bool { return a != nil && !a.IsNull(r) }

func strAt(a arrow.Array, r int) string {
	switch s := a.(type) {
	case *array.String:
		return s.Value(r)
	case *array.LargeString:
		return s.Value(r)
	}
	return ""
}

func binAt(a arrow.Array, r int) []byte {
	if a == nil || a.IsNull(r) {
		return nil
	}
	switch b := a.(type) {
	case *array.Binary:
		return b.Value(r)
	case *array.LargeBinary:
		return b.Value(r)
	}
	return nil
}

// scanSnapshots reads every data file the table's retained snapshots
// reach (or, currentOnly, its current snapshot), each file once per
// erasure, recording the keys' rows in it (t.hits). Errors: file IO.
func (t *eraseTable) scanSnapshots(ctx context.Context, currentOnly bool) error {
	fs, err := t.tbl.FS(ctx)
	if err != nil {
		return fmt.Errorf("lake: file IO: %w", err)
	}
	snaps := t.tbl.Metadata().Snapshots()
	if currentOnly {
		snaps = nil
		if cur := t.tbl.CurrentSnapshot(); cur != nil {
			snaps = []table.Snapshot{*cur}
		}
	}
	seen := map[string]bool{}
	for _, s := range snaps {
		mans, err := s.Manifests(fs)
		if err != nil {
			return err
		}
		for _, m := range mans {
			if m.ManifestContent() != iceberg.ManifestContentData || seen[m.FilePath()] {
				continue
			}
			seen[m.FilePath()] = true
			for e, err := range m.Entries(fs, true) {
				if err != nil {
					return err
				}
				df := e.DataFile()
				if df.ContentType() != iceberg.EntryContentData {
					continue
				}
				if _, done := t.hits[df.FilePath()]; done {
					continue
				}
				h, err := t.scanFile(ctx, df)
				if err != nil {
					return err
				}
				t.hits[df.FilePath()], t.files[df.FilePath()] = h, df
			}
		}
	}
	return nil
}

// scanFile counts the keys' rows in one data file, every physical row
// (also those position deletes hide). Errors: file IO, unreadable values.
func (t *eraseTable) scanFile(ctx context.Context, df iceberg.DataFile) (fileHits, error) {
	var h fileHits
	var cols []string
	for _, c := range t.m.columns() {
		if _, ok := t.tbl.Schema().FindFieldByName(c); ok {
			cols = append(cols, c)
		}
	}
	_, recs, err := t.tbl.Scan(table.WithSelectedFields(cols...)).ReadTasks(ctx, []table.FileScanTask{{File: df, Length: df.FileSizeBytes()}})
	if err != nil {
		return h, fmt.Errorf("lake: erase: read %s: %w", df.FilePath(), err)
	}
	var acts []rowAction
	for rec, err := range recs {
		if err != nil {
			return h, fmt.Errorf("lake: erase: read %s: %w", df.FilePath(), err)
		}
		acts, err = t.m.actions(rec, acts, &h.maxSeq)
		rec.Release()
		if err != nil {
			return h, err
		}
		for _, a := range acts {
			switch a {
			case actDrop, actRedact:
				h.rows++
			case actStrip:
				h.stripped++
			}
		}
	}
	return h, nil
}

// rewriteCurrent writes the current snapshot's data files that hold a
// key's row again without those rows (their position deletes applied),
// in one `overwrite` commit that also drops the delete files left
// pointing only at rewritten files and takes the keys out of a
// pending-rebuild set. It returns how many files it rewrote. Errors:
// file IO, commit failures (a concurrent commit among them: retry).
func (t *eraseTable) rewriteCurrent(ctx context.Context, cat catalog.Catalog, id string) (int, error) {
	tbl, err := lakecat.LoadTable(ctx, cat, t.ident)
	if err != nil || tbl == nil || tbl.CurrentSnapshot() == nil {
		return 0, err
	}
	t.tbl = tbl
	if err := t.scanSnapshots(ctx, true); err != nil {
		return 0, err
	}
	tasks, err := tbl.Scan().PlanFiles(ctx)
	if err != nil {
		return 0, fmt.Errorf("lake: erase: plan %s: %w", lakecat.IdentString(t.ident), err)
	}
	var chosen []table.FileScanTask
	deleteUsers := map[string]map[string]bool{}
	deleteFiles := map[string]iceberg.DataFile{}
	for _, task := range tasks {
		for _, d := range task.DeleteFiles {
			if deleteUsers[d.FilePath()] == nil {
				deleteUsers[d.FilePath()] = map[string]bool{}
			}
			deleteUsers[d.FilePath()][task.File.FilePath()] = true
			deleteFiles[d.FilePath()] = d
		}
		if len(task.EqualityDeleteFiles) > 0 || len(task.DeletionVectorFiles) > 0 {
			return 0, fmt.Errorf("lake: erase: %s data file %s has equality deletes or deletion vectors, which this pipeline does not write", lakecat.IdentString(t.ident), task.File.FilePath())
		}
		if t.hits[task.File.FilePath()].holds() {
			chosen = append(chosen, task)
		}
	}
	pending, pendingChanged, err := t.pendingWithoutKeys(tbl)
	if err != nil {
		return 0, err
	}
	if len(chosen) == 0 && !pendingChanged {
		return 0, nil
	}
	p := progressOf(tbl, id)
	var old, added, removedDeletes []iceberg.DataFile
	rewritten := map[string]bool{}
	for _, task := range chosen {
		files, err := t.rewriteFile(ctx, tbl, task)
		if err != nil {
			return 0, err
		}
		old = append(old, task.File)
		added = append(added, files...)
		rewritten[task.File.FilePath()] = true
		p.FilesRewritten = append(p.FilesRewritten, task.File.FilePath())
		for _, f := range files {
			p.FilesAdded = append(p.FilesAdded, f.FilePath())
		}
	}
	for _, path := range erasureSorted(deleteUsers) {
		all := true
		for u := range deleteUsers[path] {
			all = all && rewritten[u]
		}
		if all && len(chosen) > 0 {
			removedDeletes = append(removedDeletes, deleteFiles[path])
		}
	}
	p.DeleteFilesRemoved += len(removedDeletes)
	props := iceberg.Properties{PropErasure: p.json()}
	if pendingChanged {
		props[lakecat.PropPendingRebuild] = pending
	}
	tx := tbl.NewTransaction()
	if len(chosen) > 0 {
		summary := iceberg.Properties{"lakemirror.maintenance": "erasure", "lakemirror.erasure-id": id}
		if err := tx.ReplaceFiles(ctx, old, added, removedDeletes, summary); err != nil {
			return 0, fmt.Errorf("lake: erase: stage the rewrite of %s: %w", lakecat.IdentString(t.ident), err)
		}
	}
	if err := tx.SetProperties(props); err != nil {
		return 0, err
	}
	if t.tbl, err = lakecat.CommitTx(ctx, tbl, tx); err != nil {
		return 0, fmt.Errorf("lake: erase: commit the rewrite of %s: %w", lakecat.IdentString(t.ident), err)
	}
	return len(chosen), nil
}

// pendingWithoutKeys is the table's pending-rebuild set without the
// erased keys, and whether it held one.
func (t *eraseTable) pendingWithoutKeys(tbl *table.Table) (string, bool, error) {
	if t.kind != "mirror" && t.kind != "history" {
		return "", false, nil
	}
	pending, err := lakecat.ReadPending(tbl)
	if err != nil {
		return "", false, err
	}
	changed := false
	for k := range pending {
		if t.m.ks.has(k) {
			delete(pending, k)
			changed = true
		}
	}
	return lakecat.PendingJSON(pending), changed, nil
}

// rewriteFile writes the live rows of one data file again without the
// keys' rows: the rows kept in one file (per partition of the table's
// layout), bronze's redacted and stripped rows in another. It returns
// the files written (none when every row was a key's). Errors: file IO.
func (t *eraseTable) rewriteFile(ctx context.Context, tbl *table.Table, task table.FileScanTask) ([]iceberg.DataFile, error) {
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("lake: arrow schema: %w", err)
	}
	_, recs, err := tbl.Scan().ReadTasks(ctx, []table.FileScanTask{task})
	if err != nil {
		return nil, fmt.Errorf("lake: erase: read %s: %w", task.File.FilePath(), err)
	}
	repl := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer repl.Release()
	var kept []arrow.RecordBatch
	defer func() {
		for _, k := range kept {
			k.Release()
		}
	}()
	var acts []rowAction
	var seq cdc.Seq
	replaced := 0
	for rec, err := range recs {
		if err != nil {
			return nil, fmt.Errorf("lake: erase: read %s: %w", task.File.FilePath(), err)
		}
		if rec.NumCols() != int64(len(sc.Fields())) {
			rec.Release()
			return nil, fmt.Errorf("lake: erase: %s read %d columns, the schema has %d", task.File.FilePath(), rec.NumCols(), len(sc.Fields()))
		}
		whole := array.NewRecordBatch(sc, rec.Columns(), rec.NumRows())
		rec.Release()
		acts, err = t.m.actions(whole, acts, &seq)
		if err != nil {
			whole.Release()
			return nil, err
		}
		start := -1
		for r := 0; r <= len(acts); r++ {
			if r < len(acts) && acts[r] == actKeep {
				if start < 0 {
					start = r
				}
				continue
			}
			if start >= 0 {
				kept = append(kept, whole.NewSlice(int64(start), int64(r)))
				start = -1
			}
			if r < len(acts) && (acts[r] == actRedact || acts[r] == actStrip) {
				if err := appendBronzeRow(repl, whole, r, acts[r] == actRedact); err != nil {
					whole.Release()
					return nil, err
				}
				replaced++
			}
		}
		whole.Release()
	}
	var out []iceberg.DataFile
	if len(kept) > 0 {
		rec, err := parquetio.ConcatRecords(sc, kept)
		if err != nil {
			return nil, err
		}
		files, _, err := rowdelta.WriteRecord(ctx, tbl, "erased", rec)
		rec.Release()
		if err != nil {
			return nil, err
		}
		out = append(out, rowdelta.DataFiles(files)...)
	}
	if replaced > 0 {
		rec := repl.NewRecordBatch()
		files, _, err := rowdelta.WriteRecord(ctx, tbl, "erased", rec)
		rec.Release()
		if err != nil {
			return nil, err
		}
		out = append(out, rowdelta.DataFiles(files)...)
	}
	return out, nil
}

// bronzeKept are the columns a redacted bronze row keeps.
var bronzeKept = map[string]bool{lakecat.BronzeTopic: true, lakecat.BronzePartition: true, lakecat.BronzeOffset: true, lakecat.BronzeTimestamp: true, lakecat.ColIngestedAt: true}

// appendBronzeRow appends bronze row r of rec to b: redacted (only its
// Kafka coordinates, timestamp and ingestion time), or without its
// key-change headers. Errors: a column type bronze does not have.
func appendBronzeRow(b *array.RecordBuilder, rec arrow.RecordBatch, r int, redact bool) error {
	for i, f := range b.Schema().Fields() {
		fb := b.Field(i)
		if redact && !bronzeKept[f.Name] {
			fb.AppendNull()
			continue
		}
		var src arrow.Array
		if idx := rec.Schema().FieldIndices(f.Name); len(idx) > 0 {
			src = rec.Column(idx[0])
		}
		if err := appendValue(fb, src, r); err != nil {
			return fmt.Errorf("lake: erase: bronze column %q: %w", f.Name, err)
		}
	}
	return nil
}

// appendValue appends row r of a (nil: NULL) to b, for the column types
// of bronze; a list of headers loses its key-change headers.
func appendValue(b array.Builder, a arrow.Array, r int) error {
	if a == nil || a.IsNull(r) {
		b.AppendNull()
		return nil
	}
	switch b := b.(type) {
	case *array.StringBuilder:
		b.Append(strAt(a, r))
	case *array.BinaryBuilder:
		b.Append(binAt(a, r))
	case *array.Int32Builder:
		b.Append(a.(*array.Int32).Value(r))
	case *array.Int64Builder:
		b.Append(a.(*array.Int64).Value(r))
	case *array.TimestampBuilder:
		b.Append(a.(*array.Timestamp).Value(r))
	case *array.ListBuilder:
		l, ok := a.(*array.List)
		if !ok {
			return fmt.Errorf("unexpected %s", a.DataType())
		}
		st, ok := l.ListValues().(*array.Struct)
		sb, ok2 := b.ValueBuilder().(*array.StructBuilder)
		if !ok || !ok2 || st.NumField() != 2 || sb.NumField() != 2 {
			return fmt.Errorf("unexpected %s", a.DataType())
		}
		b.Append(true)
		from, to := l.ValueOffsets(r)
		for i := int(from); i < int(to); i++ {
			if h := strAt(st.Field(0), i); h == HeaderOldKey || h == HeaderNewKey {
				continue
			}
			sb.Append(true)
			if err := appendValue(sb.FieldBuilder(0), st.Field(0), i); err != nil {
				return err
			}
			if err := appendValue(sb.FieldBuilder(1), st.Field(1), i); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unexpected %s", a.DataType())
	}
	return nil
}

// expire drops the manifest entries of removed files from the current
// snapshot (a manifest rewrite), expires every other snapshot whose
// manifests name a file that held a key or whose summary lists a key as
// pending rebuild (but a branch's or tag's: it warns), deletes the files
// only they referenced and every file that held a key and no snapshot
// reaches any more, and records what it deleted. It returns the
// warnings. Errors: catalog, file IO and commit failures.
func (t *eraseTable) expire(ctx context.Context, cat catalog.Catalog, id string) ([]string, error) {
	tbl, err := lakecat.LoadTable(ctx, cat, t.ident)
	if err != nil || tbl == nil || tbl.CurrentSnapshot() == nil {
		return nil, err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return nil, fmt.Errorf("lake: file IO: %w", err)
	}
	keyFiles := t.keyFiles()
	names := map[string]bool{} // manifest path → names a key file (any entry status)
	holds := func(s table.Snapshot) (bool, error) {
		if s.Summary != nil && t.pendingHolds(s.Summary.Properties[lakecat.PropPendingRebuild]) {
			return true, nil
		}
		mans, err := s.Manifests(fs)
		if err != nil {
			return false, err
		}
		for _, m := range mans {
			if m.ManifestContent() != iceberg.ManifestContentData {
				continue
			}
			n, ok := names[m.FilePath()]
			if !ok {
				for e, err := range m.Entries(fs, false) {
					if err != nil {
						return false, err
					}
					if keyFiles[e.DataFile().FilePath()] {
						n = true
						break
					}
				}
				names[m.FilePath()] = n
			}
			if n {
				return true, nil
			}
		}
		return false, nil
	}
	if h, err := holds(*tbl.CurrentSnapshot()); err != nil {
		return nil, err
	} else if h {
		// the entries of removed files keep their column bounds: a merge of
		// the data manifests leaves them out
		tx := tbl.NewTransaction()
		res, err := tx.RewriteManifests(ctx, table.WithManifestTargetSize(1<<40))
		if err != nil {
			return nil, fmt.Errorf("lake: erase: rewrite the manifests of %s: %w", lakecat.IdentString(t.ident), err)
		}
		if !res.IsNoOp() {
			if tbl, err = lakecat.CommitTx(ctx, tbl, tx); err != nil {
				return nil, fmt.Errorf("lake: erase: commit the manifests of %s: %w", lakecat.IdentString(t.ident), err)
			}
		}
	}
	refs := map[int64][]string{}
	for name, ref := range tbl.Metadata().Refs() {
		if name != table.MainBranch {
			refs[ref.SnapshotID] = append(refs[ref.SnapshotID], fmt.Sprintf("%s %q", ref.SnapshotRefType, name))
		}
	}
	cur := tbl.CurrentSnapshot().SnapshotID
	var warnings []string
	var expire []int64
	for _, s := range tbl.Metadata().Snapshots() {
		h, err := holds(s)
		if err != nil {
			return nil, err
		}
		switch {
		case !h:
		case s.SnapshotID == cur:
			warnings = append(warnings, fmt.Sprintf("the current snapshot of %s still lists a removed file that held a key in a manifest (its entry keeps the file's column bounds): a later compaction or manifest merge drops it", lakecat.IdentString(t.ident)))
		case len(refs[s.SnapshotID]) > 0:
			slices.Sort(refs[s.SnapshotID])
			warnings = append(warnings, fmt.Sprintf("%v of %s keeps snapshot %d, which reaches files holding a key: they were kept (--force)", refs[s.SnapshotID], lakecat.IdentString(t.ident), s.SnapshotID))
		default:
			expire = append(expire, s.SnapshotID)
		}
	}
	p := progressOf(tbl, id)
	if len(expire) > 0 {
		p.SnapshotsExpired = append(p.SnapshotsExpired, expire...)
		reqs := []table.Requirement{table.AssertTableUUID(tbl.Metadata().TableUUID()), table.AssertRefSnapshotID(table.MainBranch, &cur)}
		updates := []table.Update{table.NewRemoveSnapshotsUpdate(expire, false), table.NewSetPropertiesUpdate(iceberg.Properties{PropErasure: p.json()})}
		if _, _, err := cat.CommitTable(ctx, tbl.Identifier(), reqs, updates); err != nil {
			return nil, fmt.Errorf("lake: erase: expire the snapshots of %s: %w", lakecat.IdentString(t.ident), err)
		}
		post, err := cat.LoadTable(ctx, t.ident)
		if err != nil {
			return nil, fmt.Errorf("lake: load %s: %w", lakecat.IdentString(t.ident), err)
		}
		if _, err := maintain.DeleteExpiredFiles(ctx, tbl, post); err != nil {
			return nil, fmt.Errorf("lake: erase: delete the files of %s's expired snapshots: %w", lakecat.IdentString(t.ident), err)
		}
		tbl = post
	}
	// every file that held a key and no retained snapshot reaches goes
	live := map[string]bool{}
	for _, s := range tbl.Metadata().Snapshots() {
		files, err := lakecat.LiveDataFiles(fs, s)
		if err != nil {
			return nil, err
		}
		for path := range files {
			live[path] = true
		}
	}
	var gone []string
	for _, path := range erasureSorted(keyFiles) {
		if live[path] || slices.Contains(p.FilesDeleted, path) {
			continue
		}
		if err := fs.Remove(path); err != nil && !errors.Is(err, stdfs.ErrNotExist) {
			return nil, fmt.Errorf("lake: erase: delete %s: %w", path, err)
		}
		gone = append(gone, path)
		p.Rows += t.hits[path].rows
	}
	if len(gone) > 0 {
		p.FilesDeleted = append(p.FilesDeleted, gone...)
		tx := tbl.NewTransaction()
		if err := tx.SetProperties(iceberg.Properties{PropErasure: p.json()}); err != nil {
			return nil, err
		}
		if t.tbl, err = lakecat.CommitTx(ctx, tbl, tx); err != nil {
			return nil, fmt.Errorf("lake: erase: record the erasure on %s: %w", lakecat.IdentString(t.ident), err)
		}
	}
	return warnings, nil
}

// pendingHolds reports whether a pending-rebuild set (JSON of hex keys)
// lists an erased key.
func (t *eraseTable) pendingHolds(js string) bool {
	if js == "" {
		return false
	}
	var keys []string
	if json.Unmarshal([]byte(js), &keys) != nil {
		return false
	}
	return slices.ContainsFunc(keys, t.m.ks.hasHex)
}

// removeOldMetadata deletes the table's previous metadata files that
// list an erased key in a pending-rebuild set (in the table's
// properties or a snapshot's summary). Errors: file IO.
func (t *eraseTable) removeOldMetadata(ctx context.Context, cat catalog.Catalog) error {
	if t.kind != "mirror" && t.kind != "history" {
		return nil
	}
	tbl, err := lakecat.LoadTable(ctx, cat, t.ident)
	if err != nil || tbl == nil {
		return err
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		return fmt.Errorf("lake: file IO: %w", err)
	}
	for e := range tbl.Metadata().PreviousFiles() {
		f, err := fs.Open(e.MetadataFile)
		if errors.Is(err, stdfs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("lake: erase: open %s: %w", e.MetadataFile, err)
		}
		b, err := io.ReadAll(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("lake: erase: read %s: %w", e.MetadataFile, err)
		}
		md, err := table.ParseMetadataBytes(b)
		if err != nil {
			continue // not ours to judge
		}
		holds := t.pendingHolds(md.Properties()[lakecat.PropPendingRebuild])
		for _, s := range md.Snapshots() {
			holds = holds || (s.Summary != nil && t.pendingHolds(s.Summary.Properties[lakecat.PropPendingRebuild]))
		}
		if holds {
			if err := fs.Remove(e.MetadataFile); err != nil && !errors.Is(err, stdfs.ErrNotExist) {
				return fmt.Errorf("lake: erase: delete %s: %w", e.MetadataFile, err)
			}
		}
	}
	return nil
}

// removeSidecar deletes the table's state sidecar (lakecat.SidecarPath), which
// holds keys: the next worker builds its state from the tables.
func removeSidecar(ctx context.Context, cat catalog.Catalog, name lakecat.TableName) error {
	mirror, err := lakecat.LoadTable(ctx, cat, name.Mirror())
	if err != nil || mirror == nil {
		return err
	}
	fs, err := mirror.FS(ctx)
	if err != nil {
		return fmt.Errorf("lake: file IO: %w", err)
	}
	if err := fs.Remove(lakecat.SidecarPath(mirror.Location())); err != nil && !errors.Is(err, stdfs.ErrNotExist) {
		return fmt.Errorf("lake: erase: delete the state sidecar of %s: %w", name, err)
	}
	return nil
}

// erasureSorted returns m's keys sorted.
func erasureSorted[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
