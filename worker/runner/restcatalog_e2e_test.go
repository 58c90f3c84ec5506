package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"go.temporal.io/sdk/client"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/config"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/schemas"
	"github.com/lakemirror/lakemirror/workflows"
)

// Environment of TestRESTCatalogS3EndToEnd, set by scripts/reststack/run.sh
// (which starts Apache Iceberg's REST catalog server and an S3-compatible
// object store on loopback).
const (
	envRESTURI       = "LAKEMIRROR_TEST_REST_URI"      // REST catalog endpoint, e.g. http://127.0.0.1:8181
	envRESTWarehouse = "LAKEMIRROR_TEST_WAREHOUSE"     // s3://bucket/prefix
	envRESTProps     = "LAKEMIRROR_TEST_CATALOG_PROPS" // CATALOG_PROPS text: s3.endpoint=...,s3.region=...,s3.access-key-id=...,s3.secret-access-key=...
	envRESTReport    = "LAKEMIRROR_TEST_REPORT"        // optional: write the tables read back here (JSON), for the script's independent reader
)

// restFixture is a real Debezium PostgreSQL capture (see
// testdata/debezium/PROVENANCE.md) whose exact mirror is
// starter/testdata/golden/debezium-postgres-data-schema-include-flink.jsonl.
var (
	restFixture = filepath.Join("..", "..", "testdata", "debezium", "flink", "debezium-postgres-data-schema-include.txt")
	restGolden  = filepath.Join("..", "..", "starter", "testdata", "golden", "debezium-postgres-data-schema-include-flink.jsonl")
	ingestedRE  = regexp.MustCompile(`,"_ingested_at":"[^"]*"`)
)

// restHistory is the exact history (SCD2) of the capture, one line per
// version, ordered by key and version: id name description weight |
// _seq.._valid_to_seq | _valid_from.._valid_to | _source_tx _is_current.
// The snapshot (op r, LSN 0x2080000, tx 601) opens 101..109; tx 602..607
// update 106 and 107, create and update 110 and 111; tx 608 deletes 111,
// which closes its last version.
const restHistory = `101 "scooter" "Small 2-wheel scooter" 3.14 | 00000000000000000000000002080000..<nil> | 2020-07-29T05:38:19.434000Z..<nil> | tx 601 current=true
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

// The catalog layer's claim, run: with CATALOG_TYPE=rest, a CATALOG_URI,
// an s3:// WAREHOUSE and CATALOG_PROPS with the S3 endpoint and keys, a
// real Debezium capture streams through Kafka and the table workflow into
// Iceberg tables held by Apache Iceberg's REST catalog server, with every
// data, delete, manifest and metadata file in S3-compatible storage. The
// mirror, bronze and history read back through the REST catalog and S3
// are exact; a compaction through the maintenance workflow keeps the
// mirror exact and drops its position deletes; a fresh worker recovers
// the table's offsets through the REST catalog and treats a redelivery of
// the whole capture as no-ops.
func TestRESTCatalogS3EndToEnd(t *testing.T) {
	uri, wh, propsText := os.Getenv(envRESTURI), os.Getenv(envRESTWarehouse), os.Getenv(envRESTProps)
	if uri == "" {
		t.Skipf("%s is not set: this test needs a running Iceberg REST catalog and S3-compatible storage; run scripts/reststack/run.sh", envRESTURI)
	}
	if !strings.HasPrefix(wh, "s3://") {
		t.Fatalf("%s=%q: want an s3:// warehouse", envRESTWarehouse, wh)
	}
	if _, err := os.Stat(restFixture); err != nil {
		t.Fatalf("the Debezium capture is missing: %v", err)
	}
	ctx := context.Background()

	// The worker's own configuration path: flags (env defaults) → Settings.
	var s config.Settings
	fs := flag.NewFlagSet("worker", flag.ContinueOnError)
	b := s.Bind(fs)
	if err := fs.Parse([]string{"-catalog-type=rest", "-catalog-uri=" + uri, "-warehouse=" + wh, "-catalog-props=" + propsText,
		"-data-dir=" + t.TempDir()}); err != nil {
		t.Fatal(err)
	}
	if err := b.Finish(); err != nil {
		t.Fatal(err)
	}
	s.TemporalAddress, s.Namespace, s.KafkaBrokers = stack.Settings.TemporalAddress, stack.Settings.Namespace, stack.Settings.KafkaBrokers
	r, err := Start(ctx, s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	stopRunner := sync.OnceFunc(r.Stop)
	defer stopRunner()
	if r.Catalog.CatalogType() != catalog.REST {
		t.Fatalf("catalog type %v, want rest", r.Catalog.CatalogType())
	}

	// a namespace of its own, so the test can run again against the same services
	ns := fmt.Sprintf("restcat%d", time.Now().UnixNano()%1_000_000_000)
	spec := activities.TableSpec{Table: ns + ".products", Topic: ns + ".inventory.products", KeyColumns: []string{"id"},
		MaxEvents: 5, MaxWait: 200 * time.Millisecond}
	msgs := restCapture(t)
	ends := produce(t, r, spec.Topic, 1, msgs)
	startWorkflow(t, r.Client, spec)
	st := waitCaughtUp(t, r.Client, spec.Table, ends)
	if st.Totals.Records != 16 || st.Totals.Changes != 16 || st.Totals.Applied != 16 || st.Totals.BronzeRows != 16 ||
		st.Totals.Quarantined != 0 || st.Totals.Batches != 4 {
		t.Fatalf("totals %+v, want 16 records and changes applied in 4 batches", st.Totals)
	}
	name, _ := lake.ParseTableName(spec.Table)

	// Every table lives in the REST catalog, its files in the S3 warehouse.
	for _, ident := range []table.Identifier{name.Mirror(), name.Bronze(), name.History()} {
		restCheckInS3(t, r, ident, wh)
	}

	golden, err := os.ReadFile(restGolden)
	if err != nil {
		t.Fatal(err)
	}
	mirror := restMirror(t, r, name)
	if mirror != string(golden) {
		t.Fatalf("mirror read through the REST catalog and S3 differs from %s:\ngot:\n%s\nwant:\n%s", restGolden, mirror, golden)
	}
	checkBronze(t, r, spec.Table, ends) // 16 records, offsets 0..15, each once
	history := restHistoryLines(t, r, name)
	if history != restHistory {
		t.Fatalf("history differs\ngot:\n%s\nwant:\n%s", history, restHistory)
	}

	// One compaction through the maintenance workflow and the REST catalog.
	run, err := r.Client.ExecuteWorkflow(ctx, client.StartWorkflowOptions{ID: "maint-compact-" + ns, TaskQueue: activities.TaskQueue},
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
		tbl, err := r.Catalog.LoadTable(ctx, ident)
		if err != nil {
			t.Fatal(err)
		}
		if n := restLiveFiles(t, tbl); n != "1 data, 0 delete" {
			t.Fatalf("%v after compaction: %s files, want 1 data, 0 delete", ident, n)
		}
		restCheckInS3(t, r, ident, wh)
	}
	checkBronze(t, r, spec.Table, ends)
	if after := restMirror(t, r, name); after != string(golden) {
		t.Fatalf("mirror after compaction differs:\ngot:\n%s\nwant:\n%s", after, golden)
	}
	if got := restHistoryLines(t, r, name); got != restHistory {
		t.Fatalf("history after compaction differs\ngot:\n%s\nwant:\n%s", got, restHistory)
	}
	stopWorkflow(t, r.Client, spec.Table)

	// A fresh worker (new REST client, empty key indexes) restarts the table:
	// it recovers the offsets from the tables' snapshot summaries through the
	// REST catalog and reads only what is new: the capture delivered again
	// (as after a connector restart), every record a no-op.
	stopRunner()
	r2, err := Start(ctx, s, quiet)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Stop()
	ends2 := produce(t, r2, spec.Topic, 1, msgs)
	startWorkflow(t, r2.Client, spec)
	st2 := waitCaughtUp(t, r2.Client, spec.Table, ends2)
	if st2.Totals.Records != 16 || st2.Totals.Applied != 0 || st2.Totals.BronzeRows != 16 || st2.Totals.Quarantined != 0 {
		t.Fatalf("after the restart: totals %+v, want the 16 redelivered records read, none applied, all in bronze", st2.Totals)
	}
	if got := restMirror(t, r2, name); got != string(golden) {
		t.Fatalf("mirror after the redelivery differs:\ngot:\n%s\nwant:\n%s", got, golden)
	}
	if got := restHistoryLines(t, r2, name); got != restHistory {
		t.Fatalf("history after the redelivery differs\ngot:\n%s\nwant:\n%s", got, restHistory)
	}
	checkBronze(t, r2, spec.Table, ends2) // 32 records, offsets 0..31, each once
	stopWorkflow(t, r2.Client, spec.Table)

	if path := os.Getenv(envRESTReport); path != "" {
		rep, _ := json.MarshalIndent(map[string]any{
			"namespace": ns, "mirror": lake.IdentString(name.Mirror()), "bronze": lake.IdentString(name.Bronze()),
			"history": lake.IdentString(name.History()), "mirror_jsonl": mirror, "history_lines": history,
			"history_jsonl": restJSONLines(t, r2, name.History(), []string{"id", lake.ColSeq}),
			"bronze_rows":   32, "compaction": res.Compact,
		}, "", "  ")
		if err := os.WriteFile(path, rep, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// restCapture reads the capture's Debezium values and keys them as
// Debezium does ({"id": N}, from the after image, or before for deletes).
func restCapture(t *testing.T) []sample.Message {
	t.Helper()
	data, err := os.ReadFile(restFixture)
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

// restMirror renders the mirror as the demo prints it: JSON lines sorted
// by key, without the wall-clock _ingested_at.
func restMirror(t *testing.T, r *Runner, name lake.TableName) string {
	t.Helper()
	return ingestedRE.ReplaceAllString(restJSONLines(t, r, name.Mirror(), []string{"id"}), "")
}

// restJSONLines renders a table as JSON lines sorted by sortCols.
func restJSONLines(t *testing.T, r *Runner, ident table.Identifier, sortCols []string) string {
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

func restHistoryLines(t *testing.T, r *Runner, name lake.TableName) string {
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
			row[lake.ColSeq], row[lake.ColValidToSeq], row[lake.ColValidFrom], row[lake.ColValidTo], row[lake.ColSourceTx], row[lake.ColIsCurrent]))
	}
	return strings.Join(lines, "\n")
}

// restCheckInS3 asserts the table is in the REST catalog with its
// metadata and every live file under the s3:// warehouse.
func restCheckInS3(t *testing.T, r *Runner, ident table.Identifier, wh string) {
	t.Helper()
	ctx := context.Background()
	tbl, err := r.Catalog.LoadTable(ctx, ident)
	if err != nil {
		t.Fatal(err)
	}
	bucket := strings.SplitN(strings.TrimPrefix(wh, "s3://"), "/", 2)[0]
	prefix := "s3://" + bucket + "/"
	if loc := tbl.Location(); !strings.HasPrefix(loc, prefix) {
		t.Fatalf("%v: location %s, want under %s", ident, loc, prefix)
	}
	if ml := tbl.MetadataLocation(); !strings.HasPrefix(ml, prefix) {
		t.Fatalf("%v: metadata %s, want under %s", ident, ml, prefix)
	}
	snap := tbl.CurrentSnapshot()
	if snap == nil {
		t.Fatalf("%v has no snapshot", ident)
	}
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mans, err := snap.Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mans {
		if !strings.HasPrefix(m.FilePath(), prefix) {
			t.Fatalf("%v: manifest %s outside the warehouse", ident, m.FilePath())
		}
		ents, err := m.FetchEntries(fs, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if p := e.DataFile().FilePath(); !strings.HasPrefix(p, prefix) {
				t.Fatalf("%v: file %s outside the warehouse", ident, p)
			}
		}
	}
}

// restLiveFiles counts the live data and delete files of the current snapshot.
func restLiveFiles(t *testing.T, tbl *table.Table) string {
	t.Helper()
	ctx := context.Background()
	fs, err := tbl.FS(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mans, err := tbl.CurrentSnapshot().Manifests(fs)
	if err != nil {
		t.Fatal(err)
	}
	data, dels := 0, 0
	for _, m := range mans {
		ents, err := m.FetchEntries(fs, true)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			if e.DataFile().ContentType() == iceberg.EntryContentData {
				data++
			} else {
				dels++
			}
		}
	}
	return fmt.Sprintf("%d data, %d delete", data, dels)
}
