package lake

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/cdc/typing"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/lake/rowdelta"
	"github.com/lakemirror/lakemirror/internal/lake/tableread"
)

// The erasures table <ns>.<table>_erasures is the audit log of erasures
// on request (docs/design.md, "Erasure") and the guard that keeps an
// erased key erased. It never holds an erased value: a key is recorded as
// the HMAC-SHA256 of its encoded form (cdc.Key) under a salt of the
// table's own (PropErasureSalt, 32 random bytes drawn when the table is
// created). The hash lets the pipeline recognise a later change of the
// key (a replay of its old Kafka records) without the key being readable
// from the table, and makes the hashes of one table useless for another
// table or a precomputed dictionary. It does not stop someone who can
// read the table and guesses a key from finding out that it was erased
// (for a key of few possible values, such as a small integer, by trying
// them all): any guard that recognises the key's replayed records can
// answer that question, and storing nothing was not an option, because
// then a replay would bring the key back.
//
// Rows: per erasure, one "requested" row per key (its hash and the
// erasure position, committed before any file is rewritten: from then on
// the key's changes at or below the position are refused), then one
// "completed" row with what the erasure did (who, when, rows per table,
// files rewritten and deleted, snapshots expired, warnings).

// Table properties of erasure.
const (
	// PropErasureSalt is the erasures table's salt (hex of 32 random bytes).
	PropErasureSalt = "lakemirror.erasure-salt"
	// PropErasureHorizon is the highest erasure position (hex `_seq`) of
	// the mirror: only a change at or below it can be of an erased key
	// that must stay erased, so only those are hashed and checked.
	PropErasureHorizon = "lakemirror.erasure-horizon"
	// PropLastErasure is the id of the last erasure whose guard the mirror
	// took; batches fence on it like on a purge (ErrHorizonMoved).
	PropLastErasure = "lakemirror.last-erasure"
	// PropErasure is, on each table an erasure rewrote or expired, the
	// JSON progress of the last erasure (eraseProgress): what a retried
	// erasure adds to instead of starting over.
	PropErasure = "lakemirror.erasure"
)

// StageErased is the quarantine stage of a change of an erased key at or
// below its erasure position: the change is refused, and neither the
// quarantine nor bronze keeps its raw key, value or headers.
const StageErased = "erased"

// Erasure events (column ColErasureEvent).
const (
	ErasureRequested = "requested"
	ErasureCompleted = "completed"
)

// Columns of the erasures table.
const (
	ColErasureID       = "erasure_id"
	ColErasureEvent    = "event"
	ColErasureAt       = "at"
	ColRequestedBy     = "requested_by"
	ColKeyColumns      = "key_columns"
	ColKeyHash         = "key_hash"
	ColErasurePosition = "position"
	ColFilesRewritten  = "files_rewritten"
	ColFilesDeleted    = "files_deleted"
	ColErasureDetails  = "details"
	ColErasureWarnings = "warnings"
)

// erasureKinds are the tables an erasure covers, in the order it
// rewrites them; their row-count columns are "<kind>_rows".
var erasureKinds = []string{"bronze", "mirror", "history", "quarantine", "purged"}

// ErasuresSchema is the erasures table's schema.
func ErasuresSchema() *iceberg.Schema {
	str, long, ts := iceberg.PrimitiveTypes.String, iceberg.PrimitiveTypes.Int64, iceberg.PrimitiveTypes.TimestampTz
	fields := []iceberg.NestedField{
		{ID: 1, Name: ColErasureID, Type: str, Required: true, Doc: "the erasure (the Temporal workflow id of the request)"},
		{ID: 2, Name: ColErasureEvent, Type: str, Required: true, Doc: "requested (one row per key, before any file changed) or completed"},
		{ID: 3, Name: ColErasureAt, Type: ts, Required: true},
		{ID: 4, Name: ColRequestedBy, Type: str, Required: true, Doc: "who asked: --requested-by, else the OS user of the starter"},
		{ID: 5, Name: ColKeyColumns, Type: str, Required: true, Doc: "JSON array of the key column names (never their values)"},
		{ID: 6, Name: ColKeyHash, Type: str, Doc: "requested: hex HMAC-SHA256 of the encoded key under the table's salt"},
		{ID: 7, Name: ColErasurePosition, Type: str, Doc: "requested: changes of the key at or below this _seq are refused from now on"},
	}
	id := 8
	for _, k := range erasureKinds {
		fields = append(fields, iceberg.NestedField{ID: id, Name: k + "_rows", Type: long, Doc: "completed: rows of the keys removed from the table's files"})
		id++
	}
	list := func(name, doc string) iceberg.NestedField {
		f := iceberg.NestedField{ID: id, Name: name, Type: &iceberg.ListType{ElementID: id + 1, Element: str, ElementRequired: true}, Doc: doc}
		id += 2
		return f
	}
	fields = append(fields,
		list(ColFilesRewritten, "completed: data files rewritten without the keys' rows"),
		list(ColFilesDeleted, "completed: data files that held the keys, deleted from storage"),
		iceberg.NestedField{ID: id, Name: ColErasureDetails, Type: str, Doc: "completed: JSON of the erasure's result per table"},
	)
	id++
	fields = append(fields, list(ColErasureWarnings, "completed: what the erasure could not do (a branch or tag that keeps the keys, with --force)"))
	return iceberg.NewSchema(0, fields...)
}

// SaltFingerprint names a salt without revealing it: the first 16 hex
// digits of its SHA-256. An erasure request carries the fingerprint of
// the salt its hashes were made with.
func SaltFingerprint(salt []byte) string {
	sum := sha256.Sum256(salt)
	return hex.EncodeToString(sum[:8])
}

// keyHasher hashes encoded keys under a table's salt.
type keyHasher struct {
	mac hash.Hash
	buf []byte
}

func newKeyHasher(salt []byte) *keyHasher { return &keyHasher{mac: hmac.New(sha256.New, salt)} }

// hash is the hex HMAC-SHA256 of k.
func (h *keyHasher) hash(k cdc.Key) string {
	h.mac.Reset()
	h.mac.Write([]byte(k))
	h.buf = h.mac.Sum(h.buf[:0])
	return hex.EncodeToString(h.buf)
}

// erasureSalt reads the salt of an erasures table. Errors: a table
// without a well-formed salt.
func erasureSalt(tbl *table.Table) ([]byte, error) {
	s, err := hex.DecodeString(tbl.Properties()[PropErasureSalt])
	if err != nil || len(s) < 16 {
		return nil, fmt.Errorf("lake: %s has no valid %s property", lakecat.IdentString(tbl.Identifier()), PropErasureSalt)
	}
	return s, nil
}

// ensureErasures loads the erasures table of name, creating it with a
// fresh salt when it does not exist. Errors: catalog failures, and a salt
// that cannot be drawn or read.
func ensureErasures(ctx context.Context, cat catalog.Catalog, name lakecat.TableName) (*table.Table, []byte, error) {
	salt := make([]byte, 32)
	if _, err := rand.Read(salt); err != nil {
		return nil, nil, fmt.Errorf("lake: draw the erasure salt: %w", err)
	}
	tbl, _, err := lakecat.LoadOrCreate(ctx, cat, name.NamespaceIdent(), name.Erasures(),
		func() (*iceberg.Schema, error) { return ErasuresSchema(), nil },
		lakecat.TableProperties(map[string]string{PropErasureSalt: hex.EncodeToString(salt)}))
	if err != nil {
		return nil, nil, err
	}
	s, err := erasureSalt(tbl)
	return tbl, s, err
}

// HashEraseKeys reads erasure keys given as "col=value[,col=value]" (one
// string per key, every key column named once; a comma followed by text
// that is not "<key column>=" belongs to the value), types each value as
// its mirror column (integers, decimals and floats as decimal text,
// booleans true/false, dates 2006-01-02, times 15:04:05.999999,
// timestamps RFC 3339, uuids canonical, binary as hex; strings as given),
// encodes the key as the pipeline does and returns its hash under the
// table's erasure salt, creating the erasures table (and its salt) when
// the table has none. Errors: *EraseKeyError for a key that does not fit
// the mirror (no such column, a key column missing, a value of the wrong
// type); no mirror table; catalog failures.
func HashEraseKeys(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, keys []string) (ErasureKeys, error) {
	var out ErasureKeys
	mirror, err := lakecat.LoadTable(ctx, cat, name.Mirror())
	if err != nil {
		return out, err
	}
	if mirror == nil {
		return out, &EraseKeyError{Msg: fmt.Sprintf("table %s has no mirror table: nothing to erase", name)}
	}
	keyCols, err := lakecat.KeyColumnsOf(mirror)
	if err != nil {
		return out, err
	}
	encoded, err := ParseEraseKeys(mirror, keyCols, keys)
	if err != nil {
		return out, err
	}
	_, salt, err := ensureErasures(ctx, cat, name)
	if err != nil {
		return out, err
	}
	h := newKeyHasher(salt)
	for _, k := range encoded {
		out.Hashes = append(out.Hashes, h.hash(k))
	}
	out.KeyColumns, out.SaltID = keyCols, SaltFingerprint(salt)
	return out, nil
}

// ParseEraseKeys types erasure keys given as text (see HashEraseKeys)
// against the mirror's key columns and returns them encoded (cdc.Key).
// Errors: *EraseKeyError.
func ParseEraseKeys(mirror *table.Table, keyCols []string, keys []string) ([]cdc.Key, error) {
	if len(keys) == 0 {
		return nil, &EraseKeyError{Msg: "no key given"}
	}
	sh, err := shapeOf(mirror.Schema(), keyCols)
	if err != nil {
		return nil, err
	}
	types := map[string]cdc.Type{}
	for _, c := range sh.cols {
		types[c.Name] = c.Type
	}
	var out []cdc.Key
	for _, arg := range keys {
		vals, err := splitKeyArg(arg, keyCols)
		if err != nil {
			return nil, err
		}
		typed := make([]cdc.Value, len(keyCols))
		for i, c := range keyCols {
			t, ok := types[c]
			if !ok {
				return nil, &EraseKeyError{Msg: fmt.Sprintf("key column %q is not a column of %s", c, lakecat.IdentString(mirror.Identifier()))}
			}
			if typed[i], err = keyValue(vals[c], t); err != nil {
				return nil, &EraseKeyError{Msg: fmt.Sprintf("key column %q: %v", c, err)}
			}
		}
		k, err := cdc.EncodeKey(nil, typed...)
		if err != nil {
			return nil, &EraseKeyError{Msg: err.Error()}
		}
		out = append(out, cdc.Key(k))
	}
	return out, nil
}

// splitKeyArg splits "a=1,b=x,y" into {a: 1, b: "x,y"} for key columns a
// and b. Errors: a column that is not a key column, given twice, or a
// key column missing (the message names the columns, never the values).
func splitKeyArg(arg string, keyCols []string) (map[string]string, error) {
	vals := map[string]string{}
	cur := ""
	for _, part := range strings.Split(arg, ",") {
		if name, v, ok := cutEq(part); ok && slices.Contains(keyCols, name) {
			if _, dup := vals[name]; dup {
				return nil, &EraseKeyError{Msg: fmt.Sprintf("key column %q given twice in one --key", name)}
			}
			vals[name], cur = v, name
			continue
		}
		if cur == "" {
			name, _, _ := cutEq(part)
			return nil, &EraseKeyError{Msg: fmt.Sprintf("--key names %q, which is not a key column (the key columns are %v); write col=value[,col=value]", name, keyCols)}
		}
		vals[cur] += "," + part
	}
	for _, c := range keyCols {
		if _, ok := vals[c]; !ok {
			return nil, &EraseKeyError{Msg: fmt.Sprintf("--key lacks key column %q (the key columns are %v)", c, keyCols)}
		}
	}
	return vals, nil
}

func cutEq(s string) (name, val string, ok bool) {
	name, val, ok = strings.Cut(s, "=")
	return name, val, ok && name != ""
}

// keyValue types one key value given as text for column type t.
func keyValue(text string, t cdc.Type) (cdc.Value, error) {
	var v cdc.Value
	switch t.Kind {
	case cdc.KindString:
		v = cdc.String(text)
	case cdc.KindInt, cdc.KindDecimal, cdc.KindFloat:
		neg, digits, scale, ok := decimalText(text)
		if !ok {
			return v, errors.New("not a number")
		}
		if neg {
			digits = "-" + digits
		}
		v = cdc.BigDecimal(digits, scale)
	case cdc.KindBool:
		switch text {
		case "true":
			v = cdc.Bool(true)
		case "false":
			v = cdc.Bool(false)
		default:
			return v, errors.New("not true or false")
		}
	case cdc.KindDate:
		d, err := time.Parse("2006-01-02", text)
		if err != nil {
			return v, errors.New("not a date (2006-01-02)")
		}
		v = cdc.Date(d.Unix() / 86400)
	case cdc.KindTime:
		d, err := time.Parse("15:04:05.999999", text)
		if err != nil {
			return v, errors.New("not a time (15:04:05.999999)")
		}
		v = cdc.Time(int64(d.Hour())*3600e6 + int64(d.Minute())*60e6 + int64(d.Second())*1e6 + int64(d.Nanosecond()/1000))
	case cdc.KindTimestamp, cdc.KindTimestampTZ:
		d, err := time.Parse(time.RFC3339Nano, text)
		if err != nil {
			return v, errors.New("not an RFC 3339 timestamp")
		}
		if t.Kind == cdc.KindTimestamp {
			v = cdc.Timestamp(d.UnixMicro())
		} else {
			v = cdc.TimestampTZ(d.UnixMicro())
		}
	case cdc.KindUUID:
		v = cdc.String(text)
	case cdc.KindBytes:
		b, err := hex.DecodeString(text)
		if err != nil {
			return v, errors.New("binary keys are given as hex")
		}
		v = cdc.Bytes(b)
	default:
		return v, fmt.Errorf("a key of type %s cannot be erased by value", t)
	}
	out, err := typing.Coerce(v, t)
	if err != nil {
		return v, errors.New("the value does not fit the column's type " + t.String())
	}
	return out, nil
}

// decimalText reads "-12.50" as sign, unscaled digits and scale.
func decimalText(s string) (neg bool, digits string, scale int16, ok bool) {
	if s != "" && (s[0] == '-' || s[0] == '+') {
		neg = s[0] == '-'
		s = s[1:]
	}
	seenDot := false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits += string(c)
			if seenDot {
				scale++
			}
		case c == '.' && !seenDot:
			seenDot = true
		default:
			return false, "", 0, false
		}
	}
	return neg, digits, scale, digits != ""
}

// erasedKeys are the keys the erasures table records as erased, each with
// its highest erasure position, as of one snapshot of that table.
type erasedKeys struct {
	snap int64
	h    *keyHasher
	pos  map[string]cdc.Seq // key hash → highest erasure position
}

// refuses reports whether a change of key k at seq must be refused
// because k was erased at or above seq, and why (naming positions only).
func (e *erasedKeys) refuses(k cdc.Key, seq cdc.Seq) (bool, string) {
	if e == nil || len(e.pos) == 0 {
		return false, ""
	}
	p, ok := e.pos[e.h.hash(k)]
	if !ok || seq > p {
		return false, ""
	}
	return true, fmt.Sprintf("the key was erased on request at position %s and this change is at %s, at or below it: it is refused, and its key, value and headers are not stored", p.Hex(), seq.Hex())
}

// holds reports whether key k was ever erased.
func (e *erasedKeys) holds(k cdc.Key) bool {
	if e == nil || len(e.pos) == 0 {
		return false
	}
	_, ok := e.pos[e.h.hash(k)]
	return ok
}

// loadErasedKeys reads the requested erasures of name, reusing cur when
// the erasures table has not moved. nil when the table does not exist.
// Errors: catalog and file IO, a malformed row or salt.
func loadErasedKeys(ctx context.Context, cat catalog.Catalog, name lakecat.TableName, cur *erasedKeys) (*erasedKeys, error) {
	tbl, err := lakecat.LoadTable(ctx, cat, name.Erasures())
	if err != nil || tbl == nil {
		return nil, err
	}
	snap := snapID(tbl)
	if cur != nil && cur.snap == snap {
		return cur, nil
	}
	salt, err := erasureSalt(tbl)
	if err != nil {
		return nil, err
	}
	out := &erasedKeys{snap: snap, h: newKeyHasher(salt), pos: map[string]cdc.Seq{}}
	rows, err := readErasureRows(ctx, tbl)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		if r.event != ErasureRequested || r.keyHash == "" {
			continue
		}
		if p, ok := out.pos[r.keyHash]; !ok || r.position > p {
			out.pos[r.keyHash] = r.position
		}
	}
	return out, nil
}

// erasureRow is one row of the erasures table.
type erasureRow struct {
	id, event, by string
	at            time.Time
	keyColumns    []string
	keyHash       string
	position      cdc.Seq
	rows          map[string]int64 // completed: per kind
	rewritten     []string
	deleted       []string
	details       string
	warnings      []string
}

// readErasureRows reads every row of the erasures table (small: a few
// rows per erasure). Errors: file IO, a malformed position.
func readErasureRows(ctx context.Context, tbl *table.Table) ([]erasureRow, error) {
	if tbl.CurrentSnapshot() == nil {
		return nil, nil
	}
	rows, _, err := tableread.ReadRows(ctx, tbl, nil)
	if err != nil {
		return nil, err
	}
	str := func(r tableread.Row, c string) string { s, _ := r[c].(string); return s }
	var out []erasureRow
	for _, r := range rows {
		e := erasureRow{id: str(r, ColErasureID), event: str(r, ColErasureEvent), by: str(r, ColRequestedBy),
			keyHash: str(r, ColKeyHash), details: str(r, ColErasureDetails)}
		_ = json.Unmarshal([]byte(str(r, ColKeyColumns)), &e.keyColumns)
		if p := str(r, ColErasurePosition); p != "" {
			s, err := cdc.ParseSeqHex(p)
			if err != nil {
				return nil, fmt.Errorf("lake: bad %s %q in %s: %w", ColErasurePosition, p, lakecat.IdentString(tbl.Identifier()), err)
			}
			e.position = s
		}
		out = append(out, e)
	}
	return out, nil
}

// appendErasureRows appends rows to the erasures table in one commit.
// Errors: file IO and commit failures (retryable).
func appendErasureRows(ctx context.Context, tbl *table.Table, rows []erasureRow) (*table.Table, error) {
	sc, err := table.SchemaToArrowSchema(tbl.Schema(), nil, true, false)
	if err != nil {
		return nil, fmt.Errorf("lake: arrow schema: %w", err)
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer b.Release()
	col := func(n string) array.Builder { return b.Field(sc.FieldIndices(n)[0]) }
	optStr := func(n, v string) {
		if v == "" {
			col(n).AppendNull()
		} else {
			col(n).(*array.StringBuilder).Append(v)
		}
	}
	strList := func(n string, vs []string, present bool) {
		lb := col(n).(*array.ListBuilder)
		if !present {
			lb.AppendNull()
			return
		}
		lb.Append(true)
		for _, v := range vs {
			lb.ValueBuilder().(*array.StringBuilder).Append(v)
		}
	}
	for _, r := range rows {
		col(ColErasureID).(*array.StringBuilder).Append(r.id)
		col(ColErasureEvent).(*array.StringBuilder).Append(r.event)
		col(ColErasureAt).(*array.TimestampBuilder).Append(parquetio.Timestamp(r.at.UnixMicro()))
		col(ColRequestedBy).(*array.StringBuilder).Append(r.by)
		kc, _ := json.Marshal(r.keyColumns)
		col(ColKeyColumns).(*array.StringBuilder).Append(string(kc))
		optStr(ColKeyHash, r.keyHash)
		optStr(ColErasurePosition, r.position.Hex())
		done := r.event == ErasureCompleted
		for _, k := range erasureKinds {
			if done {
				col(k + "_rows").(*array.Int64Builder).Append(r.rows[k])
			} else {
				col(k + "_rows").AppendNull()
			}
		}
		strList(ColFilesRewritten, r.rewritten, done)
		strList(ColFilesDeleted, r.deleted, done)
		optStr(ColErasureDetails, r.details)
		strList(ColErasureWarnings, r.warnings, done)
	}
	rec := b.NewRecordBatch()
	defer rec.Release()
	files, _, err := rowdelta.WriteRecord(ctx, tbl, "erasures", rec)
	if err != nil {
		return nil, err
	}
	out, _, err := rowdelta.CommitRowDelta(ctx, tbl, "erasures", rowdelta.DataFiles(files), rowdelta.DeleteSet{}, iceberg.Properties{"lakemirror.maintenance": "erasure"})
	return out, err
}

// erasuresHorizon is the highest erasure position the erasures table of
// name records ("" when it has none): the erasure horizon of a mirror
// created again (dropped with the other tables, the erasures table
// kept), so that the keys erased before stay erased. Errors: catalog and
// file IO.
func erasuresHorizon(ctx context.Context, cat catalog.Catalog, name lakecat.TableName) (string, error) {
	tbl, err := lakecat.LoadTable(ctx, cat, name.Erasures())
	if err != nil || tbl == nil {
		return "", err
	}
	rows, err := readErasureRows(ctx, tbl)
	if err != nil {
		return "", err
	}
	var h cdc.Seq
	for _, r := range rows {
		if r.event == ErasureRequested {
			h = max(h, r.position)
		}
	}
	return h.Hex(), nil
}

// erasureGuard is what a mirror writer's last Prepare read of the erased
// keys: the keys, the mirror's erasure horizon ("" when no key was ever
// erased: nothing is checked) and the table's shape, to type keys.
type erasureGuard struct {
	keys    *erasedKeys
	horizon cdc.Seq
	sh      *shape
}

// prepareErasure loads the erased keys for a Prepare of the mirror tbl
// (past: changes read back for a rebuild, which are not checked).
// Errors: catalog and file IO, a malformed horizon or erasures table.
func (w *MirrorWriter) prepareErasure(ctx context.Context, tbl *table.Table, past bool) error {
	g := &w.erasure
	g.horizon, g.sh = "", nil
	if past {
		return nil
	}
	h, err := seqProp(tbl, PropErasureHorizon)
	if err != nil || h == "" {
		return err
	}
	if g.keys, err = loadErasedKeys(ctx, w.cat, w.name, g.keys); err != nil {
		return err
	}
	if g.sh, err = shapeOf(tbl.Schema(), w.keyCols); err != nil {
		return err
	}
	g.horizon = h
	return nil
}

// erasedReject is the quarantine entry of a change of an erased key at or
// below its erasure position, or nil. Only changes at or below the
// mirror's erasure horizon are hashed. The key is typed like Prepare
// types it (the key columns alone, so a change whose other values do not
// fit is still recognised); a key that does not type is taken as decoded.
func (w *MirrorWriter) erasedReject(sh *shape, e *cdc.Event) *ConformError {
	g := &w.erasure
	if g.horizon == "" || e.Seq > g.horizon || !(e.Op.IsUpsert() || e.Op == cdc.OpDelete) {
		return nil
	}
	k := e.Key
	if img := e.Image(); img != nil {
		if tk, err := sh.typedKey(img); err == nil {
			k = tk
		}
	}
	refuse, why := g.keys.refuses(k, e.Seq)
	if !refuse {
		return nil
	}
	return &ConformError{Origin: e.Origin, Stage: StageErased, Err: errors.New(why)}
}

// typedKey is the key of img with only its key columns typed to the
// table's columns. Errors: a key value that does not fit.
func (s *shape) typedKey(img *cdc.Row) (cdc.Key, error) {
	vals := make([]cdc.Value, len(s.keyCols))
	for i, c := range s.keyCols {
		v, ok := img.Get(c)
		if !ok {
			return "", fmt.Errorf("key column %q is missing", c)
		}
		j := s.names.Index(c)
		if j < 0 {
			return "", fmt.Errorf("key column %q is not in the table", c)
		}
		tv, err := typing.Coerce(v, s.cols[j].Type)
		if err != nil {
			return "", err
		}
		vals[i] = tv
	}
	b, err := cdc.EncodeKey(nil, vals...)
	return cdc.Key(b), err
}

// TypedKey is the key of a row image (as decoded from a Kafka record key
// or value) typed to mirror's key columns, as the pipeline stores it.
// Errors: a key column missing, a value that does not fit, an
// unsupported column type.
func TypedKey(mirror *table.Table, keyCols []string, img *cdc.Row) (cdc.Key, error) {
	sh, err := shapeOf(mirror.Schema(), keyCols)
	if err != nil {
		return "", err
	}
	return sh.typedKey(img)
}

// purgeFence is what a batch's Prepare checks the mirror against and its
// Stage compares (ErrHorizonMoved): the purge horizon, the last purge and
// the last erasure.
func purgeFence(tbl *table.Table) string {
	p := tbl.Properties()
	return p[PropPurgeHorizon] + "/" + p[PropLastPurge] + "/" + p[PropLastErasure]
}

// headerOldKey is the Kafka header Debezium puts on the create of a key
// change, holding the old key (schemas.HeaderOldKey).
const headerOldKey = "__debezium.oldkey"

// redactErased applies the refusals of erased keys (the last Prepare's,
// whose events are given) to a batch's bronze records and quarantine
// entries: a record refused as erased keeps only its Kafka coordinates,
// timestamp and ingestion time in bronze (a row that tells the offset was
// read) and its quarantine entry has no raw key or value; the create of a
// key change whose old key is erased, at or below its erasure position,
// applies, forgets the old key, and its bronze record loses the
// __debezium.oldkey header (so does the delete of a key change whose new
// key is erased: it forgets the new key and loses __debezium.newkey). A
// record that is no row change (a tombstone, an undecodable record) has
// no position: with keyOf, one whose Kafka key is an erased key's is
// redacted the same way, in bronze and in the quarantine.
func (w *MirrorWriter) redactErased(bronze []BronzeRecord, quarantine []QuarantineRecord, events []*cdc.Event, keyOf func([]byte) (*cdc.Row, bool)) {
	g := &w.erasure
	if g.horizon == "" {
		return
	}
	type at = [2]int64
	erased, strip := map[at]bool{}, map[at]bool{}
	erasedKey := func(b []byte) bool {
		if keyOf == nil || b == nil {
			return false
		}
		row, ok := keyOf(b)
		if !ok {
			return false
		}
		k, err := g.sh.typedKey(row)
		return err == nil && g.keys.holds(k)
	}
	for i := range quarantine {
		q := &quarantine[i]
		if q.Stage == StageErased || (q.Stage == StageDecode && erasedKey(q.Key)) {
			q.Key, q.Value = nil, nil
			erased[at{int64(q.Partition), q.Offset}] = true
		}
	}
	for _, e := range events {
		if e.OldKey != "" && e.Seq <= g.horizon {
			if refuse, _ := g.keys.refuses(e.OldKey, e.Seq); refuse {
				strip[at{int64(e.Origin.Partition), e.Origin.Offset}] = true
				e.OldKey = "" // nor does the local state log keep it (the erased key has no row to take values from)
			}
		}
		if e.NewKey != "" && e.Seq <= g.horizon {
			if refuse, _ := g.keys.refuses(e.NewKey, e.Seq); refuse {
				strip[at{int64(e.Origin.Partition), e.Origin.Offset}] = true
				e.NewKey = "" // the erased key is not refilled from this one's changes
			}
		}
	}
	for i := range bronze {
		r := &bronze[i]
		o := at{int64(r.Partition), r.Offset}
		switch {
		case erased[o] || (r.Op == "" && r.PK == "" && erasedKey(r.Key)):
			r.Key, r.Value, r.Headers, r.Op, r.Seq, r.SourceTs, r.PK = nil, nil, nil, "", "", 0, ""
		case strip[o]:
			r.Headers = slices.DeleteFunc(slices.Clone(r.Headers), func(h BronzeHeader) bool { return h.Key == headerOldKey || h.Key == headerNewKey })
		}
	}
}
