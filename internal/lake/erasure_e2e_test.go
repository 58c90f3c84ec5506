//go:build e2e

package lake

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake/erasure"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/schemas"
)

// otherID is the key the erased key's row moves to (a primary-key change).
var otherID = "k-new"

// The erased key's life: created, updated, deleted, tombstoned, purged,
// created again, updated, one update quarantined (a value that does not
// fit), and moved to another key (a primary-key change, whose records
// name it in a header). Other keys change around it. Erase removes every
// byte of it from every file any retained snapshot of the five tables
// reaches (read as bytes, the tables written uncompressed, and through
// the Go Parquet reader), leaves the other keys' rows exactly as they
// were, records itself without the key, and a replay of the key's old
// records (at new offsets, and as a backfill of the old ones) leaves it
// erased while a newer change applies.
func TestEraseKeyFromAllTables(t *testing.T) {
	t.Run("default layout", func(t *testing.T) { testEraseKey(t, layout.Tables{}) })
	// mirror rows in buckets and sorted, history by day, bronze unpartitioned:
	// rewritten files go to their partitions, delete files stay in theirs
	t.Run("partitioned and sorted", func(t *testing.T) {
		testEraseKey(t, layout.Tables{
			Mirror:  layout.Spec{PartitionBy: []string{"bucket(4, id)"}, SortBy: []string{"name desc"}},
			History: layout.Spec{PartitionBy: []string{"day(_valid_from)"}},
			Bronze:  layout.Spec{PartitionBy: []string{layout.Unpartitioned}},
		})
	})
}

// decoderMatcher is the RawMatcher of the activities, on the test's decoder.
type decoderMatcher struct{ dec *schemas.Decoder }

func (m decoderMatcher) RecordKeys(key, value []byte) []cdc.Key {
	if key != nil {
		if k, err := m.dec.DecodeKey(key); err == nil {
			return []cdc.Key{k}
		}
	}
	if value != nil {
		if d, err := m.dec.Decode(schemas.Record{Value: value}); err == nil && d.Event != nil && d.Event.Key != "" {
			return []cdc.Key{d.Event.Key}
		}
	}
	return nil
}

func (m decoderMatcher) SerializedKey(b []byte) (cdc.Key, bool) {
	k, err := m.dec.DecodeKey(b)
	return k, err == nil
}

// uncompressed makes a table write Parquet without compression, so that
// a value written to it can be found in the file's bytes.
func uncompressed(t *testing.T, cat catalog.Catalog, ident table.Identifier) {
	t.Helper()
	ctx := context.Background()
	tbl, err := cat.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	tx := tbl.NewTransaction()
	if err := tx.SetProperties(iceberg.Properties{"write.parquet.compression-codec": "uncompressed"}); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// filesHolding is every local file under dir whose bytes hold a needle.
func filesHolding(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && holdsNeedle(b) {
			out = append(out, p)
		}
		return nil
	})
	return out
}

// isPlaceholder recognises a bronze line of a redacted record.
func isPlaceholder(l string) bool {
	return strings.Contains(l, "op=<nil>") && strings.Contains(l, "kafka_value=<nil>") && strings.Contains(l, "kafka_key=<nil>") && strings.Contains(l, "_key=<nil>")
}

func testEraseKey(t *testing.T, lay layout.Tables) {
	ctx := context.Background()
	p := newErasePipeline(t, lay)
	rec := func(id string, value []byte, headers ...BronzeHeader) kafkaRec {
		return kafkaRec{key: personKey(id), value: value, headers: headers}
	}
	secret := func(v int) string { return fmt.Sprintf("%s Alice Street %d", eraseMarker, v) }
	// batch 1 creates the tables, without the erased key
	p.batch([]kafkaRec{
		rec("k-1", personValue("c", 10, "", person("k-1", "Bob", 1))),
		rec("k-2", personValue("c", 11, "", person("k-2", "Carol", 2))),
		rec("k-9", personValue("c", 12, "", person("k-9", "Dave", 9))),
	})
	for _, ident := range []table.Identifier{testTable.Bronze(), testTable.Mirror(), testTable.History()} {
		uncompressed(t, p.cat, ident)
	}
	for _, c := range []struct {
		ident table.Identifier
		sc    *iceberg.Schema
	}{{testTable.Quarantine(), QuarantineSchema()}, {testTable.Purged(), PurgedSchema()}} {
		props := lakecat.TableProperties(map[string]string{"write.parquet.compression-codec": "uncompressed"})
		if _, err := p.cat.CreateTable(ctx, c.ident, c.sc, catalog.WithProperties(props)); err != nil {
			t.Fatal(err)
		}
	}
	p.batch([]kafkaRec{
		rec(erasedID, personValue("c", 20, "", person(erasedID, secret(1), 100))),
		rec("k-1", personValue("u", 21, "", person("k-1", "Bob", 11))),
		rec("k-9", personValue("d", 22, person("k-9", "Dave", 9), "")),
	})
	p.batch([]kafkaRec{
		rec(erasedID, personValue("u", 30, "", person(erasedID, secret(2), 200))),
		rec("k-2", personValue("u", 31, "", person("k-2", "Carol", 22))),
	})
	p.batch([]kafkaRec{
		rec(erasedID, personValue("d", 40, person(erasedID, secret(2), 200), "")),
		{key: personKey(erasedID)}, // its tombstone
	})
	// purge the deleted rows (the erased key's and k-9's): the clock is years on
	p.tw.Mirror.now = func() time.Time { return time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) }
	if res, err := p.tw.Mirror.Purge(ctx, 30*24*time.Hour, 0); err != nil || res.Purged != 2 {
		t.Fatalf("purge: %+v %v", res, err)
	}
	p.tw.Mirror.now = time.Now
	p.batch([]kafkaRec{
		rec(erasedID, personValue("c", 50, "", person(erasedID, secret(3), 300))),
		rec("k-3", personValue("c", 51, "", person("k-3", "Erin", 3))),
	})
	p.batch([]kafkaRec{
		rec(erasedID, personValue("u", 60, "", person(erasedID, secret(4), 400))),
		rec(erasedID, personValue("u", 61, "", person(erasedID, secret(5), `"not a number"`))), // quarantined
		rec("k-1", personValue("u", 62, "", person("k-1", "Bob", `"no number either"`))),       // quarantined, another key's
	})
	// the row moves to key k-new (Debezium: a delete naming the new key, a
	// tombstone, a create naming the old key)
	p.batch([]kafkaRec{
		rec(erasedID, personValue("d", 70, person(erasedID, secret(4), 400), ""), BronzeHeader{Key: schemas.HeaderNewKey, Value: personKey(otherID)}),
		{key: personKey(erasedID)},
		rec(otherID, personValue("c", 71, "", person(otherID, "Frank", 7)), BronzeHeader{Key: schemas.HeaderOldKey, Value: personKey(erasedID)}),
	})
	if err := p.tw.Mirror.State().WriteSidecar(ctx); err != nil {
		t.Fatal(err)
	}
	mirror, _ := p.cat.LoadTable(ctx, testTable.Mirror())
	sidecar := localPath(tablestate.SidecarPath(mirror.Location()))

	// every table and the local state hold the key before the erasure: the search works
	for kind, ident := range fiveTables {
		inBytes, inValues := findErased(t, p.cat, ident(testTable))
		if len(inBytes) == 0 || len(inValues) == 0 {
			t.Fatalf("before the erasure %s holds no byte of the key: files %v, values %v", kind, inBytes, inValues)
		}
	}
	if len(filesHolding(t, p.dir)) == 0 || len(filesHolding(t, filepath.Dir(sidecar))) == 0 {
		t.Fatal("before the erasure the local state and the sidecar hold no byte of the key")
	}
	others := map[string][]string{}
	for kind, ident := range fiveTables {
		others[kind] = tableLines(t, p.cat, ident(testTable), lakecat.ColIngestedAt)
	}
	// k-new's create names the erased key in a header: it stays, without it
	for _, l := range tableLines(t, p.cat, testTable.Bronze(), lakecat.ColIngestedAt, "*all") {
		if strings.Contains(l, "kafka_offset=17 ") {
			others["bronze"] = append(others["bronze"], strings.Replace(l, fmt.Sprintf("kafka_headers=[map[key:%s value:%s]]", schemas.HeaderOldKey, personKey(erasedID)), "kafka_headers=[]", 1))
			slices.Sort(others["bronze"])
		}
	}
	mirror, _ = p.cat.LoadTable(ctx, testTable.Mirror())
	applied := mirror.Properties()[PropAppliedPosition]

	keys, err := erasure.HashEraseKeys(ctx, p.cat, testTable, []string{"id=" + erasedID})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 5, 9, 0, 0, 0, time.UTC)
	req := erasure.EraseRequest{ID: "erase-1", Keys: keys, RequestedBy: "dpo@example.com", RequestedAt: at,
		Matcher: decoderMatcher{schemas.NewDecoder(schemas.DecoderOptions{KeyColumns: []string{"id"}})},
		Now:     func() time.Time { return at.Add(time.Minute) }}
	res, err := erasure.Erase(ctx, p.cat, testTable, req)
	if err != nil {
		t.Fatal(err)
	}
	// the worker's local state is dropped and rebuilt from the tables
	p.tw.Mirror.State().Invalidate()
	if err := p.tw.Mirror.EnsureState(ctx); err != nil {
		t.Fatal(err)
	}

	for kind, ident := range fiveTables {
		if inBytes, inValues := findErased(t, p.cat, ident(testTable)); len(inBytes)+len(inValues) > 0 {
			t.Errorf("after the erasure %s still holds the key: files %v, values %v", kind, inBytes, inValues)
		}
	}
	if inBytes, inValues := findErased(t, p.cat, testTable.Erasures()); len(inBytes)+len(inValues) > 0 {
		t.Errorf("the erasures table holds the key: %v %v", inBytes, inValues)
	}
	if f := filesHolding(t, p.dir); len(f) > 0 {
		t.Errorf("the local state still holds the key: %v", f)
	}
	if _, err := os.Stat(sidecar); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the state sidecar is still there: %v", err)
	}
	wantRows := map[string]int64{"bronze": 9, "mirror": 6, "history": 8, "quarantine": 1, "purged": 1}
	for kind, n := range wantRows {
		if got := res.Tables[kind].Rows; got != n {
			t.Errorf("%s: %d rows erased, want %d (%+v)", kind, got, n, res.Tables[kind])
		}
	}
	if res.Position != applied || applied == "" || len(res.Warnings) != 0 {
		t.Errorf("position %s, warnings %v", res.Position, res.Warnings)
	}
	// the other keys are exactly as they were (k-new's create lost only the header naming the erased key)
	for kind, ident := range fiveTables {
		got := tableLines(t, p.cat, ident(testTable), lakecat.ColIngestedAt)
		want := others[kind]
		if kind == "bronze" {
			got = slices.DeleteFunc(got, isPlaceholder)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s after the erasure:\n%s\nwant\n%s", kind, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
	// bronze keeps one row per offset: the erased key's records as placeholders
	bronze, _ := p.cat.LoadTable(ctx, testTable.Bronze())
	rows, _, err := ReadRows(ctx, bronze, []string{lakecat.BronzeOffset})
	if err != nil {
		t.Fatal(err)
	}
	var placeholders []int64
	for i, r := range rows {
		if r[lakecat.BronzeOffset] != int64(i) {
			t.Fatalf("bronze row %d is offset %v", i, r[lakecat.BronzeOffset])
		}
		if r[lakecat.BronzeKey] == nil && r[lakecat.BronzeValue] == nil && r[lakecat.BronzeOp] == nil && r[lakecat.ColKey] == nil && r[lakecat.ColSeq] == nil {
			placeholders = append(placeholders, r[lakecat.BronzeOffset].(int64))
		}
	}
	if !slices.Equal(placeholders, []int64{3, 6, 8, 9, 10, 12, 13, 15, 16}) || len(rows) != 18 {
		t.Errorf("bronze placeholders at %v of %d rows", placeholders, len(rows))
	}
	// the audit: a requested row with the key's hash, a completed row; no value
	etbl, _ := p.cat.LoadTable(ctx, testTable.Erasures())
	audit, _, err := ReadRows(ctx, etbl, []string{erasure.ColErasureEvent})
	if err != nil {
		t.Fatal(err)
	}
	if len(audit) != 2 {
		t.Fatalf("audit rows %v", audit)
	}
	done, asked := audit[0], audit[1]
	if asked[erasure.ColErasureEvent] != erasure.ErasureRequested || asked[erasure.ColKeyHash] != keys.Hashes[0] || asked[erasure.ColErasurePosition] != res.Position ||
		asked[erasure.ColRequestedBy] != "dpo@example.com" || asked[erasure.ColKeyColumns] != `["id"]` || asked[erasure.ColErasureID] != "erase-1" {
		t.Errorf("requested row %v", asked)
	}
	if done[erasure.ColErasureEvent] != erasure.ErasureCompleted || done["bronze_rows"] != int64(9) || done["mirror_rows"] != int64(6) || done["history_rows"] != int64(8) ||
		done["quarantine_rows"] != int64(1) || done["purged_rows"] != int64(1) || done[erasure.ColKeyHash] != nil || done[erasure.ColErasureAt] != "2026-12-05T09:01:00.000000Z" {
		t.Errorf("completed row %v", done)
	}
	deleted := 0
	for _, tr := range res.Tables {
		deleted += len(tr.FilesDeleted)
		if len(tr.FilesDeleted) == 0 || len(tr.SnapshotsExpired) == 0 {
			t.Errorf("a table deleted no file or expired no snapshot: %+v", res.Tables)
		}
	}
	if got, _ := done[erasure.ColFilesDeleted].([]any); len(got) != deleted {
		t.Errorf("completed row lists %d deleted files, the result %d", len(got), deleted)
	}
	// the same erasure again (a retried activity): what it recorded
	again, err := erasure.Erase(ctx, p.cat, testTable, req)
	if err != nil || !again.AlreadyCompleted || again.Tables["mirror"].Rows != 6 {
		t.Fatalf("erasure again: %+v %v", again, err)
	}

	// a replay of the key's old records: at new offsets (a redelivery) and
	// at their own (a backfill); then a newer change of the key applies
	replay := []kafkaRec{
		rec(erasedID, personValue("c", 20, "", person(erasedID, secret(1), 100))),
		rec(erasedID, personValue("u", 60, "", person(erasedID, secret(4), 400))),
		{key: personKey(erasedID)},
		rec(otherID, personValue("c", 71, "", person(otherID, "Frank", 7)), BronzeHeader{Key: schemas.HeaderOldKey, Value: personKey(erasedID)}),
	}
	out := p.batch(replay)
	if len(out.Quarantined) != 2 || out.Quarantined[0].Stage != StageErased || out.Quarantined[0].Value != nil || out.Quarantined[0].Key != nil {
		t.Fatalf("redelivery quarantined %+v", out.Quarantined)
	}
	p.batch(replay[:2], 3)
	for kind, ident := range fiveTables {
		if inBytes, inValues := findErased(t, p.cat, ident(testTable)); len(inBytes)+len(inValues) > 0 {
			t.Errorf("after the replay %s holds the key: files %v, values %v", kind, inBytes, inValues)
		}
	}
	if f := filesHolding(t, p.dir); len(f) > 0 {
		t.Errorf("after the replay the local state holds the key (k-new's old key?): %v", f)
	}
	q, _ := p.cat.LoadTable(ctx, testTable.Quarantine())
	qrows, _, err := ReadRows(ctx, q, []string{lakecat.BronzeOffset})
	if err != nil {
		t.Fatal(err)
	}
	var erasedQ []string
	for _, r := range qrows {
		if r[ColStage] == StageErased {
			erasedQ = append(erasedQ, fmt.Sprintf("%v key=%v value=%v", r[lakecat.BronzeOffset], r[lakecat.BronzeKey], r[lakecat.BronzeValue]))
		}
	}
	if want := []string{"3 key=<nil> value=<nil>", "4 key=<nil> value=<nil>", "18 key=<nil> value=<nil>", "19 key=<nil> value=<nil>"}; !slices.Equal(erasedQ, want) {
		t.Errorf("quarantined as erased: %v, want %v", erasedQ, want)
	}
	for kind, ident := range fiveTables {
		if kind == "bronze" || kind == "quarantine" {
			continue
		}
		if got := tableLines(t, p.cat, ident(testTable), lakecat.ColIngestedAt); !slices.Equal(got, others[kind]) {
			t.Errorf("%s after the replay:\n%s\nwant\n%s", kind, strings.Join(got, "\n"), strings.Join(others[kind], "\n"))
		}
	}
	p.batch([]kafkaRec{rec(erasedID, personValue("c", 80, "", person(erasedID, "New Person", 1)))})
	m, _ := p.cat.LoadTable(ctx, testTable.Mirror())
	live, _, _ := ReadRows(ctx, m, []string{"id"})
	if fmt.Sprint(live[0]["id"], " ", live[0]["name"]) != erasedID+" New Person" {
		t.Errorf("the newer change of the erased key: %v", live[0])
	}
}
