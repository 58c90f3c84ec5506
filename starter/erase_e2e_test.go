//go:build e2e

package main

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakemirror/lakemirror/internal/devstack"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/erasure"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/lake/parquetio"
	"github.com/lakemirror/lakemirror/internal/lake/tablestate"
	"github.com/lakemirror/lakemirror/worker/runner"
	"github.com/lakemirror/lakemirror/workflows"
)

// eraseMarker is in the erased key and in its values; the test looks for
// it (as text and as hex) in every file of the five tables.
const eraseMarker = "ERASEME7f"

var erasedKey = "KEY-" + eraseMarker + "3a9c-0042"

// personChange is a Debezium PostgreSQL change of people(id, name,
// amount) without the envelope, at WAL position lsn, committed in 2023
// (so that a 30-day purge takes its deletes).
func personChange(op string, lsn int, before, after string) []byte {
	if before == "" {
		before = "null"
	}
	if after == "" {
		after = "null"
	}
	ts := 1_700_000_000_000 + int64(lsn)
	return []byte(fmt.Sprintf(`{"before":%s,"after":%s,"source":{"version":"2.7.3.Final","connector":"postgresql","name":"srv","ts_ms":%d,"snapshot":"false","db":"crm","sequence":"[\"%d\",\"%d\"]","schema":"public","table":"people","txId":%d,"lsn":%d,"xmin":null},"op":%q,"ts_ms":%d}`,
		before, after, ts, lsn-1, lsn, lsn, lsn, op, ts))
}

func personRow(id, name string, amount any) string {
	return fmt.Sprintf(`{"id":%q,"name":%q,"amount":%v}`, id, name, amount)
}

func personKafkaKey(id string) []byte { return []byte(fmt.Sprintf(`{"id":%q}`, id)) }

// startStackSidecars is startStack with a worker that writes each table's
// state sidecar (its local state, which holds values) after every batch.
func startStackSidecars(t *testing.T) *e2eStack {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	d, err := devstack.StartStack(ctx, devstack.StackOptions{UIPort: -1, SearchAttributes: workflows.SearchAttributeTypes})
	if err != nil {
		t.Fatal(err)
	}
	settings := d.Settings
	settings.SidecarEvery = 1
	r, err := runner.Start(ctx, settings, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		d.Stop()
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Stop(); d.Stop() })
	return &e2eStack{dev: d, r: r}
}

// needleBytes are the marker as text and as hex (bronze's `_key`).
func needleBytes() [][]byte {
	h := hex.EncodeToString([]byte(eraseMarker))
	return [][]byte{[]byte(eraseMarker), []byte(h), []byte(strings.ToUpper(h))}
}

func hasNeedle(b []byte) bool {
	return slices.ContainsFunc(needleBytes(), func(n []byte) bool { return bytes.Contains(b, n) })
}

// arrayHasNeedle reports whether a value of a (strings and binaries, in
// lists and structs too) holds the marker.
func arrayHasNeedle(a arrow.Array) bool {
	switch a := a.(type) {
	case *array.String:
		for i := 0; i < a.Len(); i++ {
			if !a.IsNull(i) && hasNeedle([]byte(a.Value(i))) {
				return true
			}
		}
	case *array.Binary:
		for i := 0; i < a.Len(); i++ {
			if !a.IsNull(i) && hasNeedle(a.Value(i)) {
				return true
			}
		}
	case *array.List:
		return arrayHasNeedle(a.ListValues())
	case *array.Struct:
		for f := 0; f < a.NumField(); f++ {
			if arrayHasNeedle(a.Field(f)) {
				return true
			}
		}
	}
	return false
}

// erasedFiles lists, for one table, what holds the marker among the data
// and delete files any retained snapshot reaches (their bytes, and their
// values through the Go Parquet reader) and the manifests whose entries'
// column bounds do; read is how many data and delete files it read.
func erasedFiles(t *testing.T, cat catalog.Catalog, ident table.Identifier) (found []string, read int) {
	t.Helper()
	ctx := context.Background()
	tbl, err := lake.LoadTable(ctx, cat, ident)
	if err != nil {
		t.Fatal(err)
	}
	if tbl == nil {
		return nil, 0
	}
	fsys, _ := tbl.FS(ctx)
	seen := map[string]bool{}
	for _, s := range tbl.Metadata().Snapshots() {
		mans, err := s.Manifests(fsys)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mans {
			for e, err := range m.Entries(fsys, false) {
				if err != nil {
					t.Fatal(err)
				}
				df := e.DataFile()
				for _, bounds := range []map[int][]byte{df.LowerBoundValues(), df.UpperBoundValues()} {
					for _, b := range bounds {
						if hasNeedle(b) && !slices.Contains(found, m.FilePath()) {
							found = append(found, m.FilePath())
						}
					}
				}
				if e.Status() == iceberg.EntryStatusDELETED || seen[df.FilePath()] {
					continue
				}
				seen[df.FilePath()] = true
				read++
				if fileHasNeedle(t, ctx, fsys, df.FilePath()) {
					found = append(found, df.FilePath())
				}
			}
		}
	}
	return found, read
}

// fileHasNeedle reads one Parquet file as bytes and through the Go
// Parquet reader (every column) and reports whether either holds the marker.
func fileHasNeedle(t *testing.T, ctx context.Context, fsys iceio.IO, path string) bool {
	t.Helper()
	f, err := fsys.Open(path)
	if err != nil {
		t.Fatalf("a reachable file cannot be opened: %v", err)
	}
	b, err := io.ReadAll(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if hasNeedle(b) {
		return true
	}
	pf, err := parquetio.Open(fsys, path)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	found := false
	err = pf.Scan(ctx, nil, nil, func(rec arrow.RecordBatch, _ int64) error {
		for _, c := range rec.Columns() {
			found = found || arrayHasNeedle(c)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// localFilesHolding lists the files under dir whose bytes hold the marker.
func localFilesHolding(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		if hasNeedle(b) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// otherRows reads a table's live rows as sorted lines of every column but
// _ingested_at, leaving out those that hold the marker.
func otherRows(t *testing.T, cat catalog.Catalog, ident table.Identifier) []string {
	t.Helper()
	return rowLines(t, cat, ident, false)
}

// rowLines is otherRows, with the rows that hold the marker when all.
func rowLines(t *testing.T, cat catalog.Catalog, ident table.Identifier, all bool) []string {
	t.Helper()
	tbl, err := lake.LoadTable(context.Background(), cat, ident)
	if err != nil || tbl == nil {
		t.Fatalf("load %v: %v", ident, err)
	}
	rows, cols, err := lake.ReadRows(context.Background(), tbl, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range rows {
		var parts []string
		for _, c := range cols {
			if c != lakecat.ColIngestedAt {
				parts = append(parts, fmt.Sprintf("%s=%v", c, r[c]))
			}
		}
		if line := strings.Join(parts, " ") + " "; all || !hasNeedle([]byte(line)) {
			out = append(out, line)
		}
	}
	slices.Sort(out)
	return out
}

// readersPython is the Python of the pinned reader environment
// (scripts/realstack/requirements.txt: pyiceberg, DuckDB with its iceberg
// extension): $LAKEMIRROR_PYTHON, else the virtualenv scripts/realstack/
// setup.sh makes in its cache; "" when neither exists.
func readersPython(t *testing.T) string {
	if p := os.Getenv("LAKEMIRROR_PYTHON"); p != "" {
		return p
	}
	req, err := os.ReadFile("../scripts/realstack/requirements.txt")
	if err != nil {
		t.Fatal(err)
	}
	cache := os.Getenv("LAKEMIRROR_CACHE")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache", "lakemirror-realstack")
	}
	sum := sha1.Sum(req)
	p := filepath.Join(cache, "venv-"+hex.EncodeToString(sum[:])[:10], "bin", "python")
	if _, err := os.Stat(filepath.Join(filepath.Dir(filepath.Dir(p)), ".complete")); err != nil {
		return ""
	}
	return p
}

// pythonFindings is find_values.py's report of one table.
type pythonFindings struct {
	Snapshots       int      `json:"snapshots"`
	DataFiles       int      `json:"data_files"`
	DeleteFiles     int      `json:"delete_files"`
	Bytes           []string `json:"bytes"`
	Pyarrow         []string `json:"pyarrow"`
	DuckDBFiles     []string `json:"duckdb_files"`
	DuckDBSnapshots []int64  `json:"duckdb_snapshots"`
	PyicebergSnaps  []int64  `json:"pyiceberg_snapshots"`
}

func (f *pythonFindings) found() int {
	return len(f.Bytes) + len(f.Pyarrow) + len(f.DuckDBFiles) + len(f.DuckDBSnapshots) + len(f.PyicebergSnaps)
}

// findWithPython runs scripts/erasure/find_values.py (pyiceberg and
// DuckDB) over the tables.
func findWithPython(t *testing.T, python string, s *e2eStack, idents []string) map[string]*pythonFindings {
	t.Helper()
	dir := s.dev.Settings.DataDir
	args := []string{"../scripts/erasure/find_values.py", "--catalog-db", filepath.Join(dir, "catalog.db"), "--warehouse", filepath.Join(dir, "warehouse"), "--needle", eraseMarker}
	for _, id := range idents {
		args = append(args, "--table", id)
	}
	cmd := exec.Command(python, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("find_values.py: %v\n%s", err, stderr.String())
	}
	var res map[string]*pythonFindings
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("find_values.py printed %s: %v", out, err)
	}
	return res
}

// `starter erase` end to end: a key lives through every table (created,
// updated, deleted, tombstoned, purged, created again, updated, an update
// quarantined, moved to another key), the worker writes its state next
// to the mirror after every batch, and the tables are written
// uncompressed so that a value shows in the files' bytes. The erasure
// leaves no byte of the key in any data or delete file any retained
// snapshot of the five tables reaches (read as bytes and as values by
// the Go Parquet reader, pyiceberg and DuckDB), in the manifests' column
// bounds, anywhere in the warehouse, in the worker's local state or its
// sidecar; the audit row holds no value; a replay of the key's old Kafka
// records (a redelivery and a backfill) leaves it erased; the other keys
// are exactly as they were.
func TestEraseCommand(t *testing.T) {
	s := startStackSidecars(t)
	ctx := context.Background()
	cat := s.r.Catalog
	const topic, tableName = "srv.public.people", "crm.people"
	name := lake.TableName{Namespace: "crm", Name: "people"}
	if err := s.r.Kafka.CreateTopic(ctx, topic, 1); err != nil {
		t.Fatal(err)
	}
	var offset int64
	caughtUp := func() {
		t.Helper()
		waitFor(t, time.Minute, fmt.Sprintf("%s at offset %d", tableName, offset), func() bool {
			st := statusOf(t, s.r.Client, tableName)
			return st.Offsets[0] == offset && st.LastBatch != nil
		})
	}
	started := false
	produce := func(recs ...*kgo.Record) {
		t.Helper()
		for _, r := range recs {
			r.Topic = topic
			if err := s.r.Kafka.Produce(ctx, r); err != nil {
				t.Fatal(err)
			}
			offset++
		}
		if started {
			caughtUp()
		}
	}
	rec := func(id string, value []byte, headers ...kgo.RecordHeader) *kgo.Record {
		return &kgo.Record{Key: personKafkaKey(id), Value: value, Headers: headers}
	}
	secret := func(v int) string { return fmt.Sprintf("%s Alice Street %d", eraseMarker, v) }

	produce(rec("k-1", personChange("c", 10, "", personRow("k-1", "Bob", 1))),
		rec("k-2", personChange("c", 11, "", personRow("k-2", "Carol", 2))),
		rec("k-9", personChange("c", 12, "", personRow("k-9", "Dave", 9))))
	if out, errw, code := s.cli("start", topic, "--table", tableName, "--key", "id", "--batch-size", "20", "--max-wait", "200ms", "--schedules=false"); code != exitOK {
		t.Fatalf("start: exit %d\n%s%s", code, out, errw)
	}
	started = true
	caughtUp()
	// from here on the tables write uncompressed Parquet
	for _, ident := range []table.Identifier{name.Bronze(), name.Mirror(), name.History()} {
		waitFor(t, 30*time.Second, "uncompressed "+lake.IdentString(ident), func() bool {
			tbl, err := cat.LoadTable(ctx, ident)
			if err != nil {
				t.Fatal(err)
			}
			tx := tbl.NewTransaction()
			if err := tx.SetProperties(iceberg.Properties{"write.parquet.compression-codec": "uncompressed"}); err != nil {
				t.Fatal(err)
			}
			_, err = tx.Commit(ctx)
			return err == nil
		})
	}
	props := iceberg.Properties{"format-version": "2", "write.parquet.compression-codec": "uncompressed"}
	if _, err := cat.CreateTable(ctx, name.Quarantine(), lake.QuarantineSchema(), catalog.WithProperties(props)); err != nil {
		t.Fatal(err)
	}
	if _, err := cat.CreateTable(ctx, name.Purged(), lake.PurgedSchema(), catalog.WithProperties(props)); err != nil {
		t.Fatal(err)
	}

	produce(rec(erasedKey, personChange("c", 20, "", personRow(erasedKey, secret(1), 100))),
		rec("k-1", personChange("u", 21, "", personRow("k-1", "Bob", 11))),
		rec("k-9", personChange("d", 22, personRow("k-9", "Dave", 9), "")))
	produce(rec(erasedKey, personChange("u", 30, "", personRow(erasedKey, secret(2), 200))),
		rec("k-2", personChange("u", 31, "", personRow("k-2", "Carol", 22))))
	produce(rec(erasedKey, personChange("d", 40, personRow(erasedKey, secret(2), 200), "")),
		&kgo.Record{Key: personKafkaKey(erasedKey)}) // its tombstone
	if out, errw, code := s.cli("maintain", tableName, "purge"); code != exitOK || !strings.Contains(out, "removed 2 of 2 soft-deleted rows") {
		t.Fatalf("purge: exit %d\n%s%s", code, out, errw)
	}
	produce(rec(erasedKey, personChange("c", 50, "", personRow(erasedKey, secret(3), 300))),
		rec("k-3", personChange("c", 51, "", personRow("k-3", "Erin", 3))))
	produce(rec(erasedKey, personChange("u", 60, "", personRow(erasedKey, secret(4), 400))),
		rec(erasedKey, personChange("u", 61, "", personRow(erasedKey, secret(5), `"not a number"`))), // quarantined
		rec("k-1", personChange("u", 62, "", personRow("k-1", "Bob", `"no number either"`))))         // quarantined, another key's
	// the row moves to key k-new: a delete naming the new key, a tombstone, a create naming the old key
	produce(rec(erasedKey, personChange("d", 70, personRow(erasedKey, secret(4), 400), ""), kgo.RecordHeader{Key: "__debezium.newkey", Value: personKafkaKey("k-new")}),
		&kgo.Record{Key: personKafkaKey(erasedKey)},
		rec("k-new", personChange("c", 71, "", personRow("k-new", "Frank", 7)), kgo.RecordHeader{Key: "__debezium.oldkey", Value: personKafkaKey(erasedKey)}))

	kinds := map[string]table.Identifier{"bronze": name.Bronze(), "mirror": name.Mirror(), "history": name.History(),
		"quarantine": name.Quarantine(), "purged": name.Purged()}
	var idents []string
	for _, k := range []string{"bronze", "mirror", "history", "quarantine", "purged"} {
		idents = append(idents, lake.IdentString(kinds[k]))
	}
	mirror, err := cat.LoadTable(ctx, name.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	sidecar := strings.TrimPrefix(tablestate.SidecarPath(mirror.Location()), "file://")
	warehouse := filepath.Join(s.dev.Settings.DataDir, "warehouse")
	stateDir := s.r.Activities.StateDir
	applied := mirror.Properties()[lake.PropAppliedPosition]

	// before: every table, the local state and the sidecar hold the key (the search works)
	for kind, ident := range kinds {
		if found, _ := erasedFiles(t, cat, ident); len(found) == 0 {
			t.Fatalf("before the erasure %s holds no byte of the key", kind)
		}
	}
	if len(localFilesHolding(t, stateDir)) == 0 || len(localFilesHolding(t, filepath.Dir(sidecar))) == 0 {
		t.Fatalf("before the erasure neither the local state (%s) nor the sidecar hold the key", stateDir)
	}
	python := readersPython(t)
	if python == "" {
		t.Log("pyiceberg and DuckDB are not checked: no reader environment (run scripts/realstack/setup.sh, or set LAKEMIRROR_PYTHON)")
	} else {
		t.Logf("pyiceberg and DuckDB read the tables through %s", python)
	}
	if python != "" {
		for id, f := range findWithPython(t, python, s, idents) {
			if f == nil || f.found() == 0 || len(f.Bytes) == 0 || len(f.Pyarrow) == 0 || len(f.DuckDBFiles) == 0 || len(f.DuckDBSnapshots) == 0 || len(f.PyicebergSnaps) == 0 {
				t.Fatalf("before the erasure the Python readers find no byte of the key in %s: %+v", id, f)
			}
		}
	}
	others := map[string][]string{}
	for kind, ident := range kinds {
		others[kind] = otherRows(t, cat, ident)
	}
	// k-new's create names the erased key in a header: it stays, without it
	for _, l := range rowLines(t, cat, name.Bronze(), true) {
		if strings.Contains(l, "kafka_offset=17 ") {
			others["bronze"] = append(others["bronze"], strings.Replace(l,
				fmt.Sprintf("kafka_headers=[map[key:__debezium.oldkey value:%s]]", personKafkaKey(erasedKey)), "kafka_headers=[]", 1))
			slices.Sort(others["bronze"])
		}
	}

	// usage errors change nothing
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"erase", tableName, "--yes"}, "starter: give the keys to erase: --key col=value[,col=value] (repeatable)\n"},
		{[]string{"erase", tableName, "--key", "id=x"}, "erase 1 key from crm.people (bronze, mirror, history, quarantine, purged): irreversible\n"},
		{[]string{"erase", tableName, "--key", "name=x", "--yes"}, `starter: lake: erase: --key names "name", which is not a key column (the key columns are [id]); write col=value[,col=value]` + "\n"},
	} {
		out, errw, code := s.cli(c.args...)
		if code != exitUsage || (errw != c.want && out != c.want) {
			t.Errorf("%v: exit %d\n%s%s", c.args, code, out, errw)
		}
	}
	if tbl, err := lake.LoadTable(ctx, cat, name.Erasures()); err != nil || tbl != nil {
		t.Fatalf("a refused erase created the erasures table: %v", err)
	}
	out, errw, code := s.cli("erase", tableName, "--key", "id="+erasedKey, "--requested-by", "dpo@example.com", "--yes", "--output", "json")
	if code != exitOK {
		t.Fatalf("erase: exit %d\n%s%s", code, out, errw)
	}
	var res lake.EraseResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("erase printed %s: %v", out, err)
	}
	if hasNeedle([]byte(out)) || hasNeedle([]byte(errw)) {
		t.Errorf("erase printed the key: %s %s", out, errw)
	}
	want := map[string][2]int{"bronze": {9, 6}, "mirror": {6, 6}, "history": {8, 6}, "quarantine": {1, 1}, "purged": {1, 1}}
	for kind, w := range want {
		r := res.Tables[kind]
		if int(r.Rows) != w[0] || len(r.FilesRewritten) != w[1] || len(r.FilesDeleted) != w[1] || len(r.SnapshotsExpired) == 0 {
			t.Errorf("%s: %d rows, %d files rewritten, %d deleted, %d snapshots expired; want %d rows, %d files rewritten and deleted",
				kind, r.Rows, len(r.FilesRewritten), len(r.FilesDeleted), len(r.SnapshotsExpired), w[0], w[1])
		}
	}
	if res.Position != applied || res.RequestedBy != "dpo@example.com" || res.Keys != 1 || len(res.Warnings) != 0 ||
		!strings.HasPrefix(res.ID, "lakemirror-erase-crm.people-") {
		t.Errorf("result %+v, want position %s", res, applied)
	}

	// after: nothing of the key anywhere the tables reach, in the warehouse, the state or the sidecar
	checkErased := func(when string) {
		t.Helper()
		for kind, ident := range kinds {
			found, read := erasedFiles(t, cat, ident)
			if len(found) > 0 || read == 0 {
				t.Errorf("%s %s holds the key in %v (%d files read)", when, kind, found, read)
			}
		}
		if found, _ := erasedFiles(t, cat, name.Erasures()); len(found) > 0 {
			t.Errorf("%s the erasures table holds the key: %v", when, found)
		}
		if found := localFilesHolding(t, warehouse); len(found) > 0 {
			t.Errorf("%s files of the warehouse hold the key: %v", when, found)
		}
		if found := localFilesHolding(t, stateDir); len(found) > 0 {
			t.Errorf("%s the local state holds the key: %v", when, found)
		}
		if python != "" {
			for id, f := range findWithPython(t, python, s, idents) {
				if f == nil || f.found() > 0 || f.DataFiles == 0 || f.Snapshots == 0 {
					t.Errorf("%s the Python readers find the key in %s: %+v", when, id, f)
				}
			}
		}
	}
	checkErased("after the erasure")
	if _, err := os.Stat(sidecar); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the state sidecar is still there: %v", err)
	}
	for kind, ident := range kinds {
		got := otherRows(t, cat, ident)
		if kind == "bronze" { // less the erased key's records, kept as placeholders
			got = slices.DeleteFunc(got, func(l string) bool {
				return strings.Contains(l, "kafka_key=<nil> ") && strings.Contains(l, "kafka_value=<nil> ") && strings.Contains(l, "op=<nil> ") && strings.Contains(l, " _key=<nil> ")
			})
		}
		if !slices.Equal(got, others[kind]) {
			t.Errorf("%s after the erasure:\n%s\nwant\n%s", kind, strings.Join(got, "\n"), strings.Join(others[kind], "\n"))
		}
	}
	etbl, err := cat.LoadTable(ctx, name.Erasures())
	if err != nil {
		t.Fatal(err)
	}
	audit, _, err := lake.ReadRows(ctx, etbl, []string{erasure.ColErasureEvent})
	if err != nil || len(audit) != 2 {
		t.Fatalf("audit rows %v %v", audit, err)
	}
	done, asked := audit[0], audit[1]
	if asked[erasure.ColErasureEvent] != erasure.ErasureRequested || asked[erasure.ColErasureID] != res.ID || asked[erasure.ColRequestedBy] != "dpo@example.com" ||
		asked[erasure.ColErasurePosition] != applied || asked[erasure.ColKeyColumns] != `["id"]` || len(fmt.Sprint(asked[erasure.ColKeyHash])) != 64 {
		t.Errorf("requested row %v", asked)
	}
	if done[erasure.ColErasureEvent] != erasure.ErasureCompleted || done["bronze_rows"] != int64(9) || done["mirror_rows"] != int64(6) ||
		done["history_rows"] != int64(8) || done["quarantine_rows"] != int64(1) || done["purged_rows"] != int64(1) || done[erasure.ColKeyHash] != nil {
		t.Errorf("completed row %v", done)
	}

	// a replay: the key's old records again (a redelivery), and a backfill of its first ones
	produce(rec(erasedKey, personChange("c", 20, "", personRow(erasedKey, secret(1), 100))),
		rec(erasedKey, personChange("u", 60, "", personRow(erasedKey, secret(4), 400))),
		&kgo.Record{Key: personKafkaKey(erasedKey)},
		rec("k-new", personChange("c", 71, "", personRow("k-new", "Frank", 7)), kgo.RecordHeader{Key: "__debezium.oldkey", Value: personKafkaKey(erasedKey)}))
	if out, errw, code := s.cli("backfill", tableName, "--range", "0:3-5", "--wait"); code != exitOK {
		t.Fatalf("backfill: exit %d\n%s%s", code, out, errw)
	}
	caughtUp()
	checkErased("after the replay")
	if b, err := os.ReadFile(sidecar); err != nil || hasNeedle(b) {
		t.Errorf("the sidecar written after the erasure: %v, holds the key %v", err, err == nil && hasNeedle(b))
	}
	for _, kind := range []string{"mirror", "history", "purged"} {
		if got := otherRows(t, cat, kinds[kind]); !slices.Equal(got, others[kind]) {
			t.Errorf("%s after the replay:\n%s\nwant\n%s", kind, strings.Join(got, "\n"), strings.Join(others[kind], "\n"))
		}
	}
	q, _ := cat.LoadTable(ctx, name.Quarantine())
	qrows, _, err := lake.ReadRows(ctx, q, []string{lake.BronzeOffset})
	if err != nil {
		t.Fatal(err)
	}
	var erasedQ []string
	for _, r := range qrows {
		if r[lake.ColStage] == lake.StageErased {
			erasedQ = append(erasedQ, fmt.Sprintf("%v %v %v", r[lake.BronzeOffset], r[lakecat.BronzeKey], r[lakecat.BronzeValue]))
		}
	}
	if want := []string{"3 <nil> <nil>", "18 <nil> <nil>", "19 <nil> <nil>"}; !slices.Equal(erasedQ, want) {
		t.Errorf("quarantined as erased: %v, want %v", erasedQ, want)
	}
	// a newer change of the key applies
	produce(rec(erasedKey, personChange("c", 80, "", personRow(erasedKey, "New Person", 1))))
	m, _ := cat.LoadTable(ctx, name.Mirror())
	live, _, err := lake.ReadRows(ctx, m, []string{"id"})
	if err != nil || fmt.Sprint(live[0]["id"], " ", live[0]["name"], " ", live[0][lake.ColDeleted]) != erasedKey+" New Person false" {
		t.Errorf("the newer change of the erased key: %v %v", live, err)
	}
}
