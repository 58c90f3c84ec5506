package cuts

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/lake/rowdelta"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// Names of the tags and of the group table (docs/design.md, "How
// readers get W: tags").
const (
	// Consistent is the tag on the newest published cut's snapshot of
	// each mirror and history table of the group, moved forward.
	Consistent = "consistent"
	// TagPrefix starts the tag of cut n: "cut-<n>".
	TagPrefix = "cut-"
	// TableName is the group table's name in the namespace of the
	// group's first table (sorted): one row per table per published cut.
	TableName = "_cuts"
	// PropCutPrefix starts the `_cuts` table's property
	// "lakemirror.cut.<group>": the number of the group's newest cut
	// whose rows are appended (set by the same commit).
	PropCutPrefix = "lakemirror.cut."
)

// Columns of the `_cuts` table.
const (
	ColGroup           = "group_name"
	ColCut             = "cut"
	ColW               = "w"
	ColTxID            = "tx_id"
	ColSourceTs        = "source_ts"
	ColPublishedAt     = "published_at"
	ColTable           = "table_name"
	ColMirrorSnapshot  = "mirror_snapshot_id"
	ColHistorySnapshot = "history_snapshot_id"
	// ColPerPosition (boolean, optional: added to `_cuts` tables created
	// before it, whose earlier rows read null) is true for a cut per
	// position (a group without a transaction topic): W is a change's
	// position, and a transaction may straddle it.
	ColPerPosition = "per_position"
)

// Tag is the tag name of cut n: "cut-<n>".
func Tag(n int64) string { return TagPrefix + strconv.FormatInt(n, 10) }

// Cut is one consistent cut of a source group to publish: every
// transaction committed at or below W is in every table of the group and
// nothing above it (the tables are held at W while it is published).
type Cut struct {
	Group      string
	Number     int64  // the cut's number in its group, from 1: its tag is Tag(Number)
	W          string // the source commit position (hex, the tables' _seq)
	TxID       string // the transaction id of the END at W ("" per position)
	SourceTsMs int64  // the END's ts_ms, milliseconds since the epoch (0: unknown)
	// PerPosition: the cut is consistent per position, not per
	// transaction (no transaction topic): every change at or below W is
	// in the tables and none above it, and a transaction may straddle W.
	PerPosition bool
}

// Tagged is what a published cut tagged in one source table: the
// snapshot ids of its mirror and history tables (0: the table does not
// exist or has no Iceberg snapshot yet, so it is empty at the cut and
// has no tag).
type Tagged struct {
	Table   string `json:"table"`
	Mirror  int64  `json:"mirror_snapshot_id"`
	History int64  `json:"history_snapshot_id,omitempty"`
}

// ErrPastCut is the error of Publish when a table's mirror has applied a
// change above the cut's W (its applied position, lakecat.PropAppliedPosition,
// is above W) or its positions have another width than W: the table left
// the cut before its tags were set (an operator's re-snapshot or backfill,
// a bound it dropped, a run started anew that reported no watermark), so
// its current Iceberg snapshots do not hold the table at W. The cut cannot
// be published; a later one can.
var ErrPastCut = errors.New("a table is past the cut")

// ErrSourceSnapshotOpen is the error of Publish when a table's mirror
// ends in the middle of a source snapshot (the BatchTally of its last
// batch, the mirror's property lakecat.PropBatchTally, says SnapshotOpen: Debezium's initial
// or blocking snapshot reads with the last still to come). Such reads
// carry no transaction, so the group's END counts do not wait for them,
// and reads of one snapshot share a position, so per position neither:
// the table at W is not known. The cut cannot be published; a later one
// can, once the snapshot's last read is applied.
var ErrSourceSnapshotOpen = errors.New("a table is in the middle of a source snapshot")

// Publish publishes cut c of the group whose tables are tables (held at
// c.W by their workflows while it runs): it tags the current Iceberg
// snapshot of each table's mirror and history `cut-<n>` (kept for
// retention: the tag's max-ref-age-ms; 0 keeps it until removed), appends
// one row per table to the group table `<ns>._cuts` (ns the first table's
// namespace) in one commit, and then moves the tag `consistent` of every
// mirror and history to the cut's snapshot. A reader that wants an exact
// cut reads each table at `cut-<n>` (or the snapshot ids of the newest
// `_cuts` rows); `consistent` moves one table at a time.
//
// Before it tags anything it checks every table (atCut): a table whose
// mirror has applied past W is not at the cut, and Publish returns
// ErrPastCut with nothing tagged; one whose last batch ended in the
// middle of a source snapshot neither (ErrSourceSnapshotOpen). The
// snapshots it checked are the ones it tags, so a table that moves on
// afterwards does not change the cut.
//
// It is idempotent: a retry after the rows were appended (the `_cuts`
// table's PropCutPrefix property) keeps the tags' snapshots and moves
// `consistent` again, and returns the cut as recorded (asRecorded: a
// later attempt of the same number bound at another W gets the recorded
// W, which the tags hold); a retry before that (or a later attempt of the
// same cut number after one was given up) checks the tables again and
// moves the tags `cut-<n>` to the snapshots it checked. A table without
// a snapshot yet (not created, or created empty) is empty at the cut:
// its row has snapshot id 0 (mirror) or null (history), and it gets no
// tag. It returns the tags and the cut published (c, or as recorded).
// Errors: no tables; ErrPastCut (wrapped, naming the table, its applied
// position and W); ErrSourceSnapshotOpen (wrapped, naming the table);
// catalog and storage failures (retryable).
func Publish(ctx context.Context, cat catalog.Catalog, c Cut, tables []lakecat.TableName, retention time.Duration, now time.Time) ([]Tagged, Cut, error) {
	if len(tables) == 0 {
		return nil, c, errors.New("lake: publish a cut: no tables")
	}
	tables = slices.SortedFunc(slices.Values(tables), func(a, b lakecat.TableName) int {
		return cmp.Compare(a.String(), b.String())
	})
	tag := Tag(c.Number)
	recorded, err := appended(ctx, cat, tables[0], c)
	if err != nil {
		return nil, c, err
	}
	if recorded {
		if c, err = asRecorded(ctx, cat, tables[0], c); err != nil {
			return nil, c, err
		}
	}
	out := make([]Tagged, 0, len(tables))
	for _, name := range tables {
		var t Tagged
		if recorded {
			t, err = tagsOf(ctx, cat, name, tag)
		} else {
			t, err = atCut(ctx, cat, name, c.W)
		}
		if err != nil {
			return nil, c, err
		}
		out = append(out, t)
	}
	type tagged struct {
		ident table.Identifier
		id    int64
	}
	var all []tagged
	for i, name := range tables {
		for _, s := range []tagged{{name.Mirror(), out[i].Mirror}, {name.History(), out[i].History}} {
			if s.id == 0 {
				continue
			}
			if !recorded {
				if err := setTag(ctx, cat, s.ident, tag, s.id, retention); err != nil {
					return nil, c, err
				}
			}
			all = append(all, s)
		}
	}
	if !recorded {
		if err := appendRows(ctx, cat, tables[0], c, out, now); err != nil {
			return nil, c, err
		}
	}
	for _, t := range all {
		if err := setTag(ctx, cat, t.ident, Consistent, t.id, 0); err != nil {
			return nil, c, err
		}
	}
	return out, c, nil
}

// asRecorded returns cut c as the group table of the group whose first
// table is first records it (rows of c.Group and c.Number): its W, TxID,
// source time and PerPosition, which differ from c's when an attempt of
// this cut number appended its rows and was then given up (its
// `consistent` moves failed through every retry), and the group bound a
// later attempt of the same number at another W. The tags `cut-<n>` hold
// the tables at the recorded W. c itself when no row is found. Errors:
// catalog and file IO.
func asRecorded(ctx context.Context, cat catalog.Catalog, first lakecat.TableName, c Cut) (Cut, error) {
	rows, err := Read(ctx, cat, first, c.Group)
	if err != nil {
		return c, err
	}
	for _, r := range rows {
		if r.Number == c.Number {
			c.W, c.TxID, c.SourceTsMs, c.PerPosition = r.W, r.TxID, r.SourceTsMs, r.PerPosition
			break
		}
	}
	return c, nil
}

// atCut returns the current Iceberg snapshots of the table name's mirror
// and history (0: no table or no snapshot), checked to hold the table at
// w (hex): the mirror's applied position (lakecat.PropAppliedPosition) is
// at or below w. The history is loaded first: each batch commits its
// mirror before its history, so a history snapshot that holds a change
// above w comes with a mirror, loaded after it, applied past w. A mirror
// written before the applied position was recorded is not checked.
// Errors: ErrPastCut (wrapped), catalog failures.
func atCut(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, w string) (Tagged, error) {
	t := Tagged{Table: name.String()}
	h, err := current(ctx, cat, name.History())
	if err != nil {
		return t, err
	}
	m, err := current(ctx, cat, name.Mirror())
	if err != nil || m == nil {
		return t, err
	}
	applied := m.Properties()[lakecat.PropAppliedPosition]
	switch {
	case applied != "" && len(applied) != len(w):
		return t, fmt.Errorf("lake: publish a cut: table %s: %w: its positions have %d words, W %s has %d: the table is not of the group's connector",
			name, ErrPastCut, len(applied)/16, w, len(w)/16)
	case applied > w:
		return t, fmt.Errorf("lake: publish a cut: table %s: %w: its mirror has applied up to %s, above W %s, so no Iceberg snapshot of it holds the table at W "+
			"(it left the cut: a re-snapshot or backfill, a bound it dropped, or a run started anew before its first batch); nothing was tagged, and a later cut will be taken",
			name, ErrPastCut, applied, w)
	}
	if read := m.Properties()[lakecat.PropReadPosition]; read != "" && len(read) == len(w) && read > w {
		return t, fmt.Errorf("lake: publish a cut: table %s: %w: its mirror holds PostgreSQL source snapshot reads taken at %s, above W %s, "+
			"which may show transactions committed above W; nothing was tagged, and a later cut above the reads will be taken",
			name, ErrPastCut, read, w)
	}
	if tl := m.Properties()[lakecat.PropBatchTally]; tl != "" {
		var tally payload.BatchTally
		if err := json.Unmarshal([]byte(tl), &tally); err == nil && tally.SnapshotOpen {
			return t, fmt.Errorf("lake: publish a cut: table %s: %w: its last batch ended with source snapshot reads "+
				"and the snapshot's last read still to come, so the table at W is not known; nothing was tagged, and a later cut will be taken once the snapshot is applied",
				name, ErrSourceSnapshotOpen)
		}
	}
	if s := m.CurrentSnapshot(); s != nil {
		t.Mirror = s.SnapshotID
	}
	if h != nil && h.CurrentSnapshot() != nil {
		t.History = h.CurrentSnapshot().SnapshotID
	}
	return t, nil
}

// current loads the table ident from the catalog (not a batch's cached
// one); nil when it does not exist.
func current(ctx context.Context, cat catalog.Catalog, ident table.Identifier) (*table.Table, error) {
	tbl, err := cat.LoadTable(ctx, ident)
	if errors.Is(err, catalog.ErrNoSuchTable) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("lake: publish a cut: load %s: %w", lakecat.IdentString(ident), err)
	}
	return tbl, nil
}

// tagsOf returns the snapshots the tag name points at in the table name's
// mirror and history (0: no table or no such tag): a cut already
// recorded in `_cuts`.
func tagsOf(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, tag string) (Tagged, error) {
	t := Tagged{Table: name.String()}
	for _, s := range []struct {
		ident table.Identifier
		id    *int64
	}{{name.Mirror(), &t.Mirror}, {name.History(), &t.History}} {
		tbl, err := current(ctx, cat, s.ident)
		if err != nil {
			return t, err
		}
		if tbl == nil {
			continue
		}
		if ref, ok := refOf(tbl, tag); ok {
			*s.id = ref.SnapshotID
		}
	}
	return t, nil
}

// appended reports whether cut c's rows are in the group table of the
// group whose first table is first (its PropCutPrefix property is at or
// above c.Number).
func appended(ctx context.Context, cat catalog.Catalog, first lakecat.TableName, c Cut) (bool, error) {
	tbl, err := current(ctx, cat, Ident(first))
	if err != nil || tbl == nil {
		return false, err
	}
	n, err := strconv.ParseInt(tbl.Properties()[PropCutPrefix+c.Group], 10, 64)
	return err == nil && n >= c.Number, nil
}

// refOf returns tbl's ref name.
func refOf(tbl *table.Table, name string) (table.SnapshotRef, bool) {
	for n, ref := range tbl.Metadata().Refs() {
		if n == name {
			return ref, true
		}
	}
	return table.SnapshotRef{}, false
}

// setTag points tag name of the table ident at snapshot id (a
// SetSnapshotRef metadata update; Iceberg spec, "Snapshot References"),
// with max-ref-age retention (0: none). A tag already at id is left.
func setTag(ctx context.Context, cat catalog.Catalog, ident table.Identifier, name string, id int64, retention time.Duration) error {
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		return fmt.Errorf("lake: publish a cut: load %s: %w", lakecat.IdentString(ident), err)
	}
	if ref, ok := refOf(tbl, name); ok && ref.SnapshotID == id {
		return nil
	}
	reqs := []table.Requirement{table.AssertTableUUID(tbl.Metadata().TableUUID())}
	upd := []table.Update{table.NewSetSnapshotRefUpdate(name, id, table.TagRef, retention.Milliseconds(), 0, 0)}
	if _, _, err := cat.CommitTable(ctx, ident, reqs, upd); err != nil {
		return fmt.Errorf("lake: publish a cut: tag %s of %s: %w", name, lakecat.IdentString(ident), err)
	}
	lakecat.CacheTable(ctx, ident, nil)
	return nil
}

// Untag removes the tag Consistent from the mirror and the history of
// name, a table taken out of its group (a RemoveSnapshotRef metadata
// update; Iceberg spec, "Snapshot References"): the group's later cuts
// do not include it, so a reader that reads every table of the group at
// `consistent` would otherwise mix this table's last cut with a later
// one's; it now gets an error for this table. Its `cut-<n>` tags stay
// (each holds the table exactly at its cut). A table, or a tag, that
// does not exist is skipped. It returns the tables it untagged. Errors:
// the catalog's.
func Untag(ctx context.Context, cat catalog.Catalog, name lakecat.TableName) ([]table.Identifier, error) {
	var out []table.Identifier
	for _, ident := range []table.Identifier{name.Mirror(), name.History()} {
		tbl, err := current(ctx, cat, ident)
		if err != nil {
			return out, err
		}
		if tbl == nil {
			continue
		}
		if _, ok := refOf(tbl, Consistent); !ok {
			continue
		}
		reqs := []table.Requirement{table.AssertTableUUID(tbl.Metadata().TableUUID())}
		if _, _, err := cat.CommitTable(ctx, ident, reqs, []table.Update{table.NewRemoveSnapshotRefUpdate(Consistent)}); err != nil {
			return out, fmt.Errorf("lake: untag %s of %s: %w", Consistent, lakecat.IdentString(ident), err)
		}
		lakecat.CacheTable(ctx, ident, nil)
		out = append(out, ident)
	}
	return out, nil
}

// Ident is the identifier of the group table `_cuts` of a group whose
// first table (sorted) is first.
func Ident(first lakecat.TableName) table.Identifier {
	return lakecat.TableName{Namespace: first.Namespace, Name: TableName}.Mirror()
}

// schema is the `_cuts` table's schema.
func schema() *iceberg.Schema {
	str, long, ts := iceberg.PrimitiveTypes.String, iceberg.PrimitiveTypes.Int64, iceberg.PrimitiveTypes.TimestampTz
	return iceberg.NewSchema(0,
		iceberg.NestedField{ID: 1, Name: ColGroup, Type: str, Required: true, Doc: "the source group"},
		iceberg.NestedField{ID: 2, Name: ColCut, Type: long, Required: true, Doc: "the cut's number in its group; its tag is cut-<n>"},
		iceberg.NestedField{ID: 3, Name: ColW, Type: str, Required: true, Doc: "the source commit position (hex, as the tables' _seq): every transaction committed at or below it, nothing above"},
		iceberg.NestedField{ID: 4, Name: ColTxID, Type: str, Doc: "the transaction id of the END at W"},
		iceberg.NestedField{ID: 5, Name: ColSourceTs, Type: ts, Doc: "the END's ts_ms: the source commit time of W"},
		iceberg.NestedField{ID: 6, Name: ColPublishedAt, Type: ts, Required: true},
		iceberg.NestedField{ID: 7, Name: ColTable, Type: str, Required: true, Doc: "the lakemirror table (namespace.table)"},
		iceberg.NestedField{ID: 8, Name: ColMirrorSnapshot, Type: long, Required: true, Doc: "the mirror's snapshot at the cut (tagged cut-<n>); 0: the table was empty at the cut (no snapshot yet)"},
		iceberg.NestedField{ID: 9, Name: ColHistorySnapshot, Type: long, Doc: "the history's snapshot at the cut (tagged cut-<n>); null without history"},
		perPositionField(10),
	)
}

// perPositionField is the ColPerPosition column with field id id (a
// table created before it gets the id its schema update assigns).
func perPositionField(id int) iceberg.NestedField {
	return iceberg.NestedField{ID: id, Name: ColPerPosition, Type: iceberg.PrimitiveTypes.Bool,
		Doc: "true: a cut per position (no transaction topic): every change at or below W, none above, and a transaction may straddle W; null in rows written before the column"}
}

// evolve adds the columns of schema() that tbl, a `_cuts` table created
// by an earlier version, lacks (ColPerPosition), as optional columns: its
// earlier rows read null. It returns tbl as committed. Errors: the
// catalog's commit.
func evolve(ctx context.Context, tbl *table.Table) (*table.Table, error) {
	if _, ok := tbl.Schema().FindFieldByName(ColPerPosition); ok {
		return tbl, nil
	}
	f := perPositionField(0)
	tx := tbl.NewTransaction()
	if err := tx.UpdateSchema(true, false).AddColumn([]string{f.Name}, f.Type, f.Doc, false, nil).Commit(); err != nil {
		return nil, fmt.Errorf("lake: add %s to %s: %w", ColPerPosition, lakecat.IdentString(tbl.Identifier()), err)
	}
	out, err := lakecat.CommitTx(ctx, tbl, tx)
	if err != nil {
		return nil, fmt.Errorf("lake: commit %s of %s: %w", ColPerPosition, lakecat.IdentString(tbl.Identifier()), err)
	}
	return out, nil
}

// appendRows appends the cut's rows to the group table in one commit,
// unless the table's PropCutPrefix property of the group says they are
// there (a retry).
func appendRows(ctx context.Context, cat catalog.Catalog, first lakecat.TableName, c Cut, tagged []Tagged, now time.Time) error {
	ident := Ident(first)
	if _, _, err := lakecat.LoadOrCreate(ctx, cat, first.NamespaceIdent(), ident,
		func() (*iceberg.Schema, error) { return schema(), nil }, lakecat.TableProperties(nil)); err != nil {
		return err
	}
	tbl, err := cat.LoadTable(ctx, ident) // not a batch's cached one
	if err != nil {
		return fmt.Errorf("lake: load %s: %w", lakecat.IdentString(ident), err)
	}
	prop := PropCutPrefix + c.Group
	if n, err := strconv.ParseInt(tbl.Properties()[prop], 10, 64); err == nil && n >= c.Number {
		return nil
	}
	if tbl, err = evolve(ctx, tbl); err != nil {
		return err
	}
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return fmt.Errorf("lake: arrow schema: %w", err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	col := func(n string) array.Builder { return b.Field(sc.FieldIndices(n)[0]) }
	for _, t := range tagged {
		col(ColGroup).(*array.StringBuilder).Append(c.Group)
		col(ColCut).(*array.Int64Builder).Append(c.Number)
		col(ColW).(*array.StringBuilder).Append(c.W)
		if c.TxID == "" {
			col(ColTxID).AppendNull()
		} else {
			col(ColTxID).(*array.StringBuilder).Append(c.TxID)
		}
		if c.SourceTsMs == 0 {
			col(ColSourceTs).AppendNull()
		} else {
			col(ColSourceTs).(*array.TimestampBuilder).Append(parquetio.Timestamp(c.SourceTsMs * 1000))
		}
		col(ColPublishedAt).(*array.TimestampBuilder).Append(parquetio.Timestamp(now.UnixMicro()))
		col(ColTable).(*array.StringBuilder).Append(t.Table)
		col(ColMirrorSnapshot).(*array.Int64Builder).Append(t.Mirror)
		if t.History == 0 {
			col(ColHistorySnapshot).AppendNull()
		} else {
			col(ColHistorySnapshot).(*array.Int64Builder).Append(t.History)
		}
		col(ColPerPosition).(*array.BooleanBuilder).Append(c.PerPosition)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	files, _, err := rowdelta.WriteRecord(ctx, tbl, "cuts", rec)
	if err != nil {
		return err
	}
	_, _, err = rowdelta.CommitRowDelta(ctx, tbl, "cuts", rowdelta.DataFiles(files), rowdelta.DeleteSet{}, iceberg.Properties{prop: strconv.FormatInt(c.Number, 10)})
	return err
}

// Row is one row of the `_cuts` table.
type Row struct {
	Group       string
	Number      int64
	W, TxID     string
	SourceTsMs  int64 // 0: null
	Table       string
	Mirror      int64
	History     int64 // 0: null
	PublishedAt time.Time
	// PerPosition: a cut per position (ColPerPosition; false for rows
	// written before the column, all of them cuts per transaction).
	PerPosition bool
}

// Read returns the rows of the group table of the group whose first
// table is first, for group (all groups when ""), ordered by cut number
// then table; none when the table does not exist. Errors: catalog and
// file IO.
func Read(ctx context.Context, cat catalog.Catalog, first lakecat.TableName, group string) ([]Row, error) {
	tbl, err := cat.LoadTable(ctx, Ident(first))
	if err != nil {
		if errors.Is(err, catalog.ErrNoSuchTable) {
			return nil, nil
		}
		return nil, fmt.Errorf("lake: load %s: %w", lakecat.IdentString(Ident(first)), err)
	}
	if tbl.CurrentSnapshot() == nil {
		return nil, nil
	}
	rows, _, err := tableread.ReadRows(ctx, tbl, nil)
	if err != nil {
		return nil, err
	}
	var out []Row
	for _, r := range rows {
		str := func(c string) string { s, _ := r[c].(string); return s }
		num := func(c string) int64 {
			switch v := r[c].(type) {
			case int64:
				return v
			case int32:
				return int64(v)
			}
			return 0
		}
		row := Row{Group: str(ColGroup), Number: num(ColCut), W: str(ColW), TxID: str(ColTxID), Table: str(ColTable),
			Mirror: num(ColMirrorSnapshot), History: num(ColHistorySnapshot)}
		row.PerPosition, _ = r[ColPerPosition].(bool)
		if ts, err := time.Parse(time.RFC3339Nano, str(ColSourceTs)); err == nil {
			row.SourceTsMs = ts.UnixMilli()
		}
		if ts, err := time.Parse(time.RFC3339Nano, str(ColPublishedAt)); err == nil {
			row.PublishedAt = ts
		}
		if group == "" || row.Group == group {
			out = append(out, row)
		}
	}
	slices.SortFunc(out, func(a, b Row) int {
		return cmp.Or(cmp.Compare(a.Number, b.Number), cmp.Compare(a.Table, b.Table))
	})
	return out, nil
}

// Refs returns the tags of a table's Iceberg snapshots that cuts set
// (`consistent` and `cut-<n>`), tag → snapshot id; none for a nil table.
func Refs(tbl *table.Table) map[string]int64 {
	out := map[string]int64{}
	if tbl == nil {
		return out
	}
	for name, ref := range tbl.Metadata().Refs() {
		if ref.SnapshotRefType == table.TagRef && (name == Consistent || strings.HasPrefix(name, TagPrefix) && len(name) > len(TagPrefix)) {
			out[name] = ref.SnapshotID
		}
	}
	return out
}
