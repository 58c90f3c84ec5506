//go:build e2e

package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	stdfs "io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	iceio "github.com/apache/iceberg-go/io"
	"github.com/apache/iceberg-go/table"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/config"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/schemas"
	"github.com/lakemirror/lakemirror/workflows"
)

// The catalog and storage suite: one body (runStorageSuite) that every
// catalog/storage combination runs against its emulator, started by a
// script under scripts/ (reststack, gcsstack, azurestack, gluestack):
// the worker configured through its own flags, a real Debezium capture,
// a worker killed between a batch's Iceberg commits, exact mirror,
// bronze and history, a compaction, a validation, a fresh worker taking
// a redelivery as no-ops, and every file of the tables in the bucket.

// Environment shared by the suite's tests (each has its own switch).
const (
	envSuiteProps   = "LAKEMIRROR_TEST_CATALOG_PROPS" // CATALOG_PROPS text for the worker
	envSuiteReport  = "LAKEMIRROR_TEST_REPORT"        // optional: write the tables read back here (JSON), for the script's independent reader
	envSuiteDataDir = "LAKEMIRROR_TEST_DATA_DIR"      // optional: the worker's data dir (the default SQLite catalog), for a reader after the test; default a temp dir
)

// suiteFixture is a real Debezium PostgreSQL capture (see
// testdata/debezium/PROVENANCE.md) whose exact mirror is
// starter/testdata/golden/debezium-postgres-data-schema-include-flink.jsonl.
var (
	suiteFixture = filepath.Join("..", "..", "testdata", "debezium", "flink", "debezium-postgres-data-schema-include.txt")
	suiteGolden  = filepath.Join("..", "..", "starter", "testdata", "golden", "debezium-postgres-data-schema-include-flink.jsonl")
	ingestedRE   = regexp.MustCompile(`,"_ingested_at":"[^"]*"`)
	scratchRE    = regexp.MustCompile(`_reapply_[0-9a-f]+_[0-9]+`)
	snapshotRE   = regexp.MustCompile(`snapshot -?[0-9]+`)
)

// suiteHistory is the exact history (SCD2) of the capture, one line per
// version, ordered by key and version: id name description weight |
// _seq.._valid_to_seq | _valid_from.._valid_to | _source_tx _is_current.
// The snapshot (op r, LSN 0x2080000, tx 601) opens 101..109; tx 602..607
// update 106 and 107, create and update 110 and 111; tx 608 deletes 111,
// which closes its last version.
const suiteHistory = `101 "scooter" "Small 2-wheel scooter" 3.14 | 00000000000000000000000002080000..<nil> | 2020-07-29T05:38:19.434000Z..<nil> | tx 601 current=true
102 "car battery" "12V car battery" 8.1 | 00000000000000000000000002080000..<nil> | 2020-07-29T05:38:19.435000Z..<nil> | tx 601 current=true
103 "12-pack drill bits" "12-pack of drill bits with sizes ranging from #40 to #3" 0.8 | 00000000000000000000000002080000..<nil> | 2020-07-29T05:38:19.435000Z..<nil> | tx 601 current=true
104 "hammer" "12oz carpenter's hammer" 0.75 | 00000000000000000000000002080000..<nil> | 2020-07-29T05:38:19.436000Z..<nil> | tx 601 current=true
105 "hammer" "14oz carpenter's hammer" 0.875 | 00000000000000000000000002080000..<nil> | 2020-07-29T05:38:19.436000Z..<nil> | tx 601 current=true
106 "hammer" "16oz carpenter's hammer" 1 | 00000000000000000000000002080000..000000000208cca0000000000208cca0 | 2020-07-29T05:38:19.436000Z..2020-07-29T08:21:29.629000Z | tx 601 current=false
106 "hammer" "18oz carpenter hammer" 1 | 000000000208cca0000000000208cca0..<nil> | 2020-07-29T08:21:29.629000Z..<nil> | tx 602 current=true
107 "rocks" "box of assorted rocks" 5.3 | 00000000000000000000000002080000..000000000208d0e8000000000208d0e8 | 2020-07-29T05:38:19.437000Z..2020-07-29T08:22:10.407000Z | tx 601 current=false
107 "rocks" "box of assorted rocks" 5.1 | 000000000208d0e8000000000208d0e8..<nil> | 2020-07-29T08:22:10.407000Z..<nil> | tx 603 current=true
108 "jacket" "water resistent black wind breaker" 0.1 | 00000000000000000000000002080000..<nil> | 2020-07-29T05:38:19.437000Z..<nil> | tx 601 current=true
109 "spare tire" "24 inch spare tire" 22.2 | 00000000000000000000000002080000..<nil> | 2020-07-29T05:38:19.437000Z..<nil> | tx 601 current=true
110 "jacket" "water resistent white wind breaker" 0.2 | 000000000208d250000000000208d250..000000000208d560000000000208d560 | 2020-07-29T08:22:26.488000Z..2020-07-29T08:23:02.228000Z | tx 604 current=false
110 "jacket" "new water resistent white wind breaker" 0.5 | 000000000208d560000000000208d560..<nil> | 2020-07-29T08:23:02.228000Z..<nil> | tx 606 current=true
111 "scooter" "Big 2-wheel scooter " 5.18 | 000000000208d450000000000208d450..000000000208d650000000000208d650 | 2020-07-29T08:22:56.756000Z..2020-07-29T08:23:05.627000Z | tx 605 current=false
111 "scooter" "Big 2-wheel scooter " 5.17 | 000000000208d650000000000208d650..000000000208d728000000000208d728 | 2020-07-29T08:23:05.627000Z..2020-07-29T08:23:08.168000Z | tx 607 current=false`

// suiteValidation is the validation of the table after the crash and
// the compaction, one line per check: verdict, check, what it observed |
// its scope (the run's scratch table, namespace and snapshot ids
// replaced). The reapply check re-applies batches 2 to 4 (the newest
// back to the first, the compaction passed over) into a scratch table.
const suiteValidation = `pass partitioning: 0 keys in more than one partition | 16 events of 11 keys
pass transitions: 0 keys with an illegal transition | 16 events of 11 keys, 0 truncates
pass continuity: 0 violations; 0 holes (0 below the log start, unverified; 0 records missing) | 1 partitions
pass watermark: applied position lsn 0/208D728, mirror max _seq lsn 0/208D728 | 5 mirror snapshots
pass replay: 0 keys a replay would change | 16 events of 11 keys, 11 mirror rows, 0 purged keys, 0 pending keys left out
pass reapply: re-applied: 11 rows, checksum b411cb34ccd45eea72660022796fc921 | batches 2 to 4 (3, 11 bronze records) re-applied to <ns>.products_reapply_<run>, a copy of <ns>.products at Iceberg snapshot <id>; compared with snapshot <id>; 0 purged keys left out`

// storageSuite is one catalog/storage combination under test.
type storageSuite struct {
	name    string       // namespace prefix: "restcat", "gcs", "azure", "glue"
	flags   []string     // the worker's catalog flags, as an operator gives them: -catalog-type, -catalog-uri, -warehouse, -catalog-props
	catType catalog.Type // the catalog type the worker must open
	root    string       // the bucket or container, e.g. "gs://lakemirror/": every file of every table lies under it
}

// suiteSettings returns the worker's settings parsed from su's flags by
// the worker's own flag/env parsing (config.Settings.Bind), pointed at
// the package's Temporal and Kafka.
func suiteSettings(t *testing.T, su storageSuite) config.Settings {
	t.Helper()
	var s config.Settings
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	b := s.Bind(fs)
	dataDir := os.Getenv(envSuiteDataDir)
	if dataDir == "" {
		dataDir = t.TempDir()
	}
	if err := fs.Parse(append(slices.Clone(su.flags), "-data-dir="+dataDir)); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	s.TemporalAddress, s.Namespace, s.KafkaBrokers = stack.Settings.TemporalAddress, stack.Settings.Namespace, stack.Settings.KafkaBrokers
	return s
}

// runStorageSuite runs the suite on su. With the worker's catalog flags,
// a real Debezium capture (16 records) streams through Kafka and the
// table workflow in batches of 5 into Iceberg tables held by su's
// catalog, with every data, delete, manifest and metadata file under
// su.root:
//
//   - crash: the first worker dies after batch 2's mirror commit, before
//     its history commit and before the workflow records the batch; a
//     new worker retries the batch, finds its bronze and mirror commits
//     and writes only the history: each table holds batch 2 once;
//   - the mirror equals the golden file byte for byte, bronze holds
//     offsets 0..15 once each, the history is exactly suiteHistory;
//   - compaction through the maintenance workflow: 4 data files and 2
//     position-delete files of mirror and history become 1 data file,
//     bronze's 4 files become 1; the tables are unchanged;
//   - validation through the ValidationWorkflow: all six checks pass,
//     with exactly suiteValidation, and its scratch table is gone;
//   - a fresh worker (new catalog client, empty key indexes) recovers the
//     offsets from the tables and takes a redelivery of the capture as 16
//     no-ops (bronze offsets 0..31);
//   - every object of the namespace under su.root belongs to one of its
//     tables, and every file those tables' metadata names is there.
//
// It writes the report for the script's independent reader when
// LAKEMIRROR_TEST_REPORT is set.
func runStorageSuite(t *testing.T, su storageSuite) {
	if _, err := os.Stat(suiteFixture); err != nil {
		t.Fatalf("the Debezium capture is missing: %v", err)
	}
	ctx := context.Background()
	s := suiteSettings(t, su)
	r1, err := Start(ctx, s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	stopR1 := sync.OnceFunc(r1.Stop)
	defer stopR1()
	if r1.Catalog.CatalogType() != su.catType {
		t.Fatalf("catalog type %v, want %v", r1.Catalog.CatalogType(), su.catType)
	}

	// a namespace of its own, so the test can run again against the same services
	ns := fmt.Sprintf("%s%d", su.name, time.Now().UnixNano()%1_000_000_000)
	spec := activities.TableSpec{Table: ns + ".products", Topic: ns + ".inventory.products", KeyColumns: []string{"id"},
		MaxEvents: 5, MaxWait: 200 * time.Millisecond}
	name, _ := lake.ParseTableName(spec.Table)

	// The first worker dies after batch 2's mirror commit; the retry
	// (after the activity's backoff) lands on a new worker.
	committed := make(chan struct{})
	var once sync.Once
	r1.Activities.AfterCommit = func(_ context.Context, b lake.Batch, table string) error {
		if b.Seq != 2 || table != "mirror" {
			return nil
		}
		once.Do(func() { close(committed) })
		return errors.New("simulated crash after the mirror commit of batch 2")
	}
	msgs := suiteCapture(t)
	ends := produce(t, r1, spec.Topic, 1, msgs)
	startWorkflow(t, r1.Client, spec)
	select {
	case <-committed:
	case <-time.After(90 * time.Second):
		t.Fatal("batch 2 was never committed")
	}
	stopR1()
	r2, err := Start(ctx, s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	stopR2 := sync.OnceFunc(r2.Stop)
	defer stopR2()
	st := waitCaughtUp(t, r2.Client, spec.Table, ends)
	if st.Totals.Records != 16 || st.Totals.Changes != 16 || st.Totals.Applied != 16 || st.Totals.BronzeRows != 16 ||
		st.Totals.Quarantined != 0 || st.Totals.Batches != 4 {
		t.Fatalf("totals %+v, want 16 records and changes applied in 4 batches", st.Totals)
	}
	// Batch 2 is in bronze and the mirror once, from the first worker; the
	// new worker, without the first one's local state, writes the batch's
	// history in order (the mirror's commit listed no late key:
	// lakemirror.batch-late-keys), once, with no rebuild. Before
	// 2026-12-06 it left the batch's keys to a rebuild from bronze.
	var commits []string
	for _, ident := range []table.Identifier{name.Mirror(), name.Bronze(), name.History()} {
		commits = append(commits, fmt.Sprintf("%s: %s", ident[1], suiteBatchCommits(t, r2, ident, spec.Table+"#2")))
		suiteCheckLocations(t, r2, ident, su.root)
	}
	if got, want := strings.Join(commits, "; "), "products: batch 2 once, 0 rebuilds; products_bronze: batch 2 once, 0 rebuilds; "+
		"products_history: batch 2 once, 0 rebuilds"; got != want {
		t.Fatalf("commits after the crash: %s, want %s", got, want)
	}

	golden, err := os.ReadFile(suiteGolden)
	if err != nil {
		t.Fatal(err)
	}
	mirror := suiteMirror(t, r2, name)
	if mirror != string(golden) {
		t.Fatalf("mirror read through the catalog and storage differs from %s:\ngot:\n%s\nwant:\n%s", suiteGolden, mirror, golden)
	}
	checkBronze(t, r2, spec.Table, ends) // 16 records, offsets 0..15, each once
	history := suiteHistoryLines(t, r2, name)
	if history != suiteHistory {
		t.Fatalf("history differs\ngot:\n%s\nwant:\n%s", history, suiteHistory)
	}

	// One compaction through the maintenance workflow.
	run, err := r2.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "maint-compact-" + ns, TaskQueue: activities.TaskQueue},
		workflows.MaintenanceWorkflowName, activities.MaintenanceRequest{Spec: spec.Defaults(), Job: activities.JobCompact})
	if err != nil {
		t.Fatal(err)
	}
	var res activities.MaintenanceResult
	if err := run.Get(ctx, &res); err != nil {
		t.Fatal(err)
	}
	t.Logf("compaction: %+v", res.Compact)
	// 16 records in batches of 5, 5, 5 and 1: four data files per table;
	// the updates and the delete left position deletes in two batches.
	for kind, want := range map[string]string{"mirror": "4 files, 2 delete files: 4 rewritten into 1, 2 delete files removed",
		"history": "4 files, 2 delete files: 4 rewritten into 1, 2 delete files removed",
		"bronze":  "4 files, 0 delete files: 4 rewritten into 1, 0 delete files removed"} {
		c := res.Compact[kind]
		if got := fmt.Sprintf("%d files, %d delete files: %d rewritten into %d, %d delete files removed",
			c.FilesBefore, c.DeleteFilesBefore, c.Rewritten, c.Added, c.RemovedDeleteFiles); got != want || c.SnapshotID == 0 {
			t.Fatalf("%s compaction: %s (snapshot %d), want %s", kind, got, c.SnapshotID, want)
		}
	}
	for _, ident := range []table.Identifier{name.Mirror(), name.Bronze(), name.History()} {
		tbl, err := r2.Catalog.LoadTable(ctx, ident)
		if err != nil {
			t.Fatal(err)
		}
		if n := suiteLiveFiles(t, tbl); n != "1 data, 0 delete" {
			t.Fatalf("%v after compaction: %s files, want 1 data, 0 delete", ident, n)
		}
		suiteCheckLocations(t, r2, ident, su.root)
	}
	checkBronze(t, r2, spec.Table, ends)
	if after := suiteMirror(t, r2, name); after != string(golden) {
		t.Fatalf("mirror after compaction differs:\ngot:\n%s\nwant:\n%s", after, golden)
	}
	if got := suiteHistoryLines(t, r2, name); got != suiteHistory {
		t.Fatalf("history after compaction differs\ngot:\n%s\nwant:\n%s", got, suiteHistory)
	}

	// The validation, as `starter validate` runs it: its reapply check
	// writes and drops a scratch table in the same catalog and storage.
	vrun, err := r2.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: workflows.ValidationWorkflowID(spec.Table, time.Now()),
		TaskQueue: activities.TaskQueue}, workflows.ValidationWorkflowName, status(t, r2.Client, spec.Table).Spec)
	if err != nil {
		t.Fatal(err)
	}
	var val activities.ValidationResult
	if err := vrun.Get(ctx, &val); err != nil {
		t.Fatal(err)
	}
	var vlines []string
	for _, c := range val.Checks { // the run's scratch table and namespace vary
		line := fmt.Sprintf("%s %s: %s | %s", c.Verdict, c.Check, c.Observed, c.Scope)
		line = snapshotRE.ReplaceAllString(scratchRE.ReplaceAllString(line, "_reapply_<run>"), "snapshot <id>")
		vlines = append(vlines, strings.ReplaceAll(line, ns+".", "<ns>."))
	}
	if got := strings.Join(vlines, "\n"); got != suiteValidation || val.Failed != 0 {
		t.Fatalf("validation (%d failed):\n%s\nwant:\n%s\n%+v", val.Failed, got, suiteValidation, val.Checks)
	}
	stopWorkflow(t, r2.Client, spec.Table)

	// A fresh worker (new catalog client, empty key indexes) restarts the
	// table: it recovers the offsets from the tables' snapshot summaries
	// and reads only what is new: the capture delivered again (as after a
	// connector restart), every record a no-op.
	stopR2()
	r3, err := Start(ctx, s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer r3.Stop()
	ends2 := produce(t, r3, spec.Topic, 1, msgs)
	startWorkflow(t, r3.Client, spec)
	st3 := waitCaughtUp(t, r3.Client, spec.Table, ends2)
	if st3.Totals.Records != 16 || st3.Totals.Applied != 0 || st3.Totals.BronzeRows != 16 || st3.Totals.Quarantined != 0 {
		t.Fatalf("after the restart: totals %+v, want the 16 redelivered records read, none applied, all in bronze", st3.Totals)
	}
	if got := suiteMirror(t, r3, name); got != string(golden) {
		t.Fatalf("mirror after the redelivery differs:\ngot:\n%s\nwant:\n%s", got, golden)
	}
	if got := suiteHistoryLines(t, r3, name); got != suiteHistory {
		t.Fatalf("history after the redelivery differs\ngot:\n%s\nwant:\n%s", got, suiteHistory)
	}
	checkBronze(t, r3, spec.Table, ends2) // 32 records, offsets 0..31, each once
	stopWorkflow(t, r3.Client, spec.Table)

	objects := suiteCheckObjects(t, r3, ns, su.root)
	t.Logf("%s: %s", su.root, objects)

	if path := os.Getenv(envSuiteReport); path != "" {
		metaLocs := map[string]string{}
		for kind, ident := range map[string]table.Identifier{"mirror": name.Mirror(), "bronze": name.Bronze(), "history": name.History()} {
			tbl, err := r3.Catalog.LoadTable(ctx, ident)
			if err != nil {
				t.Fatal(err)
			}
			metaLocs[kind] = tbl.MetadataLocation()
		}
		rep, _ := json.MarshalIndent(map[string]any{
			"namespace": ns, "mirror": lake.IdentString(name.Mirror()), "bronze": lake.IdentString(name.Bronze()),
			"history": lake.IdentString(name.History()), "mirror_jsonl": mirror, "history_lines": history,
			"history_jsonl": suiteJSONLines(t, r3, name.History(), []string{"id", lake.ColSeq}),
			"bronze_rows":   32, "compaction": res.Compact, "validation": vlines,
			"metadata_locations": metaLocs, "objects": objects,
		}, "", "  ")
		if err := os.WriteFile(path, rep, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// suiteCapture reads the capture's Debezium values and keys them as
// Debezium does ({"id": N}, from the after image, or before for deletes).
func suiteCapture(t *testing.T) []sample.Message {
	t.Helper()
	data, err := os.ReadFile(suiteFixture)
	if err != nil {
		t.Fatal(err)
	}
	vals, err := schemas.SplitValues(data)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []sample.Message
	for i, v := range vals {
		var env struct {
			Payload struct {
				Before, After map[string]json.RawMessage
			}
		}
		if err := json.Unmarshal(v, &env); err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		img := env.Payload.After
		if img == nil {
			img = env.Payload.Before
		}
		if img["id"] == nil {
			t.Fatalf("record %d has no id", i)
		}
		msgs = append(msgs, sample.Message{Key: []byte(`{"id":` + string(img["id"]) + `}`), Value: v})
	}
	if len(msgs) != 16 {
		t.Fatalf("the capture has %d records, want 16", len(msgs))
	}
	return msgs
}

// suiteMirror renders the mirror as the demo prints it: JSON lines sorted
// by key, without the wall-clock _ingested_at.
func suiteMirror(t *testing.T, r *Runner, name lake.TableName) string {
	t.Helper()
	return ingestedRE.ReplaceAllString(suiteJSONLines(t, r, name.Mirror(), []string{"id"}), "")
}

// suiteJSONLines renders a table as JSON lines sorted by sortCols.
func suiteJSONLines(t *testing.T, r *Runner, ident table.Identifier, sortCols []string) string {
	t.Helper()
	tbl, err := r.Catalog.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	rows, cols, err := lake.ReadRows(context.Background(), tbl, sortCols)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := lake.WriteJSONLines(&buf, rows, cols); err != nil {
		t.Fatal(err)
	}
	return buf.String()
}

func suiteHistoryLines(t *testing.T, r *Runner, name lake.TableName) string {
	t.Helper()
	tbl, err := r.Catalog.LoadTable(context.Background(), name.History())
	if err != nil {
		t.Fatal(err)
	}
	rows, _, err := lake.ReadRows(context.Background(), tbl, []string{"id", lake.ColSeq})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, row := range rows {
		lines = append(lines, fmt.Sprintf("%v %q %q %v | %v..%v | %v..%v | tx %v current=%v", row["id"], row["name"], row["description"], row["weight"],
			row[lake.ColSeq], row[lake.ColValidToSeq], row[lakecat.ColValidFrom], row[lakecat.ColValidTo], row[lakecat.ColSourceTx], row[lake.ColIsCurrent]))
	}
	return strings.Join(lines, "\n")
}

// suiteBatchCommits says how many of ident's snapshots commit batchID
// and how many rebuild keys (and how many keys), e.g. "batch 2 once, 0
// rebuilds".
func suiteBatchCommits(t *testing.T, r *Runner, ident table.Identifier, batchID string) string {
	t.Helper()
	tbl, err := r.Catalog.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	n, rebuilds, keys := 0, 0, ""
	for _, s := range tbl.Metadata().Snapshots() {
		if s.Summary == nil {
			continue
		}
		if s.Summary.Properties[lakecat.PropBatchID] == batchID {
			n++
		}
		if k, ok := s.Summary.Properties["lakemirror.rebuild-keys"]; ok {
			rebuilds++
			keys += " (" + k + " keys)"
		}
	}
	_, seq, _ := strings.Cut(batchID, "#")
	times := map[int]string{0: "0 times", 1: "once"}[n]
	if times == "" {
		times = fmt.Sprintf("%d times", n)
	}
	return fmt.Sprintf("batch %s %s, %d rebuilds%s", seq, times, rebuilds, keys)
}

// suiteCheckLocations asserts the table is in the catalog with its
// location, metadata and every live file under root.
func suiteCheckLocations(t *testing.T, r *Runner, ident table.Identifier, root string) {
	t.Helper()
	tbl, err := r.Catalog.LoadTable(context.Background(), ident)
	if err != nil {
		t.Fatal(err)
	}
	if loc := tbl.Location(); !strings.HasPrefix(loc, root) {
		t.Fatalf("%v: location %s, want under %s", ident, loc, root)
	}
	for _, p := range suiteTableFiles(t, tbl) {
		if !strings.HasPrefix(p, root) {
			t.Fatalf("%v: file %s outside %s", ident, p, root)
		}
	}
}

// suiteTableFiles lists the files the table's current metadata names:
// the metadata file, the current snapshot's manifest list, its manifests
// and their live data and delete files.
func suiteTableFiles(t *testing.T, tbl *table.Table) []string {
	t.Helper()
	files := []string{tbl.MetadataLocation()}
	if snap := tbl.CurrentSnapshot(); snap != nil {
		files = append(files, snap.ManifestList)
	}
	mans, ents := suiteManifests(t, tbl)
	for _, m := range mans {
		files = append(files, m.FilePath())
	}
	for _, e := range ents {
		files = append(files, e.DataFile().FilePath())
	}
	return files
}

// suiteLiveFiles counts the live data and delete files of the current snapshot.
func suiteLiveFiles(t *testing.T, tbl *table.Table) string {
	t.Helper()
	_, ents := suiteManifests(t, tbl)
	data, dels := 0, 0
	for _, e := range ents {
		if e.DataFile().ContentType() == iceberg.EntryContentData {
			data++
		} else {
			dels++
		}
	}
	return fmt.Sprintf("%d data, %d delete", data, dels)
}

// suiteManifests reads the current snapshot's manifests and their live
// entries (none without a snapshot).
func suiteManifests(t *testing.T, tbl *table.Table) ([]iceberg.ManifestFile, []iceberg.ManifestEntry) {
	t.Helper()
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		return nil, nil
	}
	fs, err := tbl.FS(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	mans, err := snap.Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	var ents []iceberg.ManifestEntry
	for _, m := range mans {
		for e, err := range m.Entries(fs, true) {
			if err != nil {
				t.Fatal(err)
			}
			ents = append(ents, e)
		}
	}
	return mans, ents
}

// suiteCheckObjects lists the bucket under root through the tables'
// FileIO and asserts that every object under a directory of namespace ns
// belongs to a table the catalog lists in ns (the validation's scratch
// table left nothing behind), and that every file those tables' current
// metadata names is among the objects. It returns a summary: the count
// of objects by kind and their bytes.
func suiteCheckObjects(t *testing.T, r *Runner, ns, root string) string {
	t.Helper()
	ctx := context.Background()
	var tables []*table.Table
	for ident, err := range r.Catalog.ListTables(ctx, table.Identifier{ns}) {
		if err != nil {
			t.Fatal(err)
		}
		tbl, err := r.Catalog.LoadTable(ctx, ident)
		if err != nil {
			t.Fatal(err)
		}
		tables = append(tables, tbl)
	}
	if len(tables) == 0 {
		t.Fatalf("namespace %s has no tables", ns)
	}
	fsys, err := tables[0].FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lister, ok := fsys.(iceio.ListableIO)
	if !ok {
		t.Fatalf("the FileIO of %s (%T) cannot list", root, fsys)
	}
	objects := map[string]int64{}
	err = lister.WalkDir(strings.TrimSuffix(root, "/"), func(path string, d stdfs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			objects[path] = info.Size()
		}
		return nil
	})
	if err != nil {
		t.Fatalf("list %s: %v", root, err)
	}
	var names []string
	kinds := map[string]int{}
	var bytes int64
	for path, size := range objects {
		if !strings.Contains(path, "/"+ns) {
			continue // another run's namespace
		}
		in := ""
		for _, tbl := range tables {
			if strings.HasPrefix(path, strings.TrimSuffix(tbl.Location(), "/")+"/") {
				in = tbl.Location()
			}
		}
		if in == "" {
			t.Errorf("%s belongs to no table of namespace %s", path, ns)
		}
		switch {
		case strings.HasSuffix(path, ".metadata.json"):
			kinds["metadata.json"]++
		case strings.HasSuffix(path, ".avro"):
			kinds["avro (manifests, lists)"]++
		case strings.HasSuffix(path, ".parquet"):
			kinds["parquet"]++
		default:
			kinds["other"]++
		}
		bytes += size
	}
	for _, tbl := range tables {
		names = append(names, tbl.Identifier()[len(tbl.Identifier())-1])
		for _, p := range suiteTableFiles(t, tbl) {
			if _, ok := objects[p]; !ok {
				t.Errorf("%v names %s, which is not in %s", tbl.Identifier(), p, root)
			}
		}
	}
	slices.Sort(names)
	var parts []string
	n := 0
	for _, k := range slices.Sorted(maps.Keys(kinds)) {
		parts = append(parts, fmt.Sprintf("%d %s", kinds[k], k))
		n += kinds[k]
	}
	return fmt.Sprintf("%d objects, %d bytes (%s) of tables %s", n, bytes, strings.Join(parts, ", "), strings.Join(names, ", "))
}
