package pipelines

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/layout"
	"github.com/lakemirror/lakemirror/internal/names"
	"github.com/lakemirror/lakemirror/internal/payload"
)

// The example file parses and resolves against a broker's topics into
// exactly these pipelines: explicit topics keep their own settings over
// the defaults, the glob takes the inventory topics not listed explicitly
// and not excluded, the regex one audit topic; Kafka's internal topics and
// topics without segments are never matched.
func TestExampleFile(t *testing.T) {
	const name = "../../examples/pipelines.yaml"
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(name, data)
	if err != nil {
		t.Fatal(err)
	}
	topics := []string{"dbserver1.inventory.orders", "dbserver1.inventory.customers", "dbserver1.inventory.products",
		"dbserver1.inventory.tmp_import", "dbserver1.audit.login_events", "dbserver1.audit.other", "dbserver1", "__consumer_offsets"}
	got, warns, err := f.Resolve(topics, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(warns) != 0 {
		t.Fatalf("warnings: %v", warns)
	}
	m := DefaultMaintenance
	noPurge := m
	noPurge.PurgeEvery = 0
	want := []Pipeline{
		{Table: "sales.orders", Topic: "dbserver1.inventory.orders", Key: []string{"order_id"},
			Settings: payload.TableSpec{StartFrom: "earliest", MaxEvents: 20000, MaxBatchEvents: 100000, MaxWait: 5 * time.Second, MaxQuarantine: 100}, Bronze: true, History: true,
			Source: "inventorydb", SourceTable: "inventory.orders", SignalTopic: "dbserver1.signals",
			Definition: "../../schemas/examples/orders.table.json", Maintenance: m,
			Layout: layout.Tables{Mirror: layout.Spec{PartitionBy: []string{"bucket(16, order_id)"}, SortBy: []string{"order_id"}},
				History: layout.Spec{PartitionBy: []string{"day(_valid_from)"}}, Bronze: layout.Spec{PartitionBy: []string{"day(_ingested_at)"}}},
			Origin: Origin{File: name, Line: 20, Path: "pipelines[0]"}},
		{Table: "inventory.customers", Topic: "dbserver1.inventory.customers", Key: []string{"id"},
			Settings: payload.TableSpec{}.Defaults(), Bronze: true, History: true,
			HistoryColumns: []string{"email", "status"}, Maintenance: m, Origin: Origin{File: name, Line: 40, Path: "pipelines[1]"}},
		{Table: "inventory.products", Topic: "dbserver1.inventory.products", Key: []string{"id"},
			Settings: payload.TableSpec{}.Defaults(), Bronze: true, History: false, Maintenance: m,
			Origin: Origin{File: name, Line: 45, Path: "pipelines[2]", Pattern: "topic_glob"}},
		{Table: "audit.login_events", Topic: "dbserver1.audit.login_events", Key: []string{"id"},
			Settings: payload.TableSpec{}.Defaults(), Bronze: false, History: false, Maintenance: noPurge,
			Origin: Origin{File: name, Line: 50, Path: "pipelines[3]", Pattern: "topic_regex"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pipelines:\n%+v\nwant\n%+v", got, want)
	}
}

// badFile has one problem (or more) per item; Parse reports every one with
// its line and YAML path, in line order.
const badFile = `version: 2
defaults:
  table: x.y
  max_wiat: 3s
  batch_size: lots
  maintenance:
    retention: 1d
pipelines:
  - topic: a.b.c
    max_wait: 5x
    key: [id, id]
    history: false
    history_columns: [a]
  - topic_glob: "a.[b"
    table: foo
  - topic: a.b.c
    topic_regex: "x"
  - namespace: ns
    batch_size: 0
    batch_size: 2
  - {}
  - topic: q.r
    maintenance: {purge_every: 30s, retention: 1h, retention_floor: 2h, bogus: 1}
    bronze: maybe
  - topic: s.t
    namespace: ns
    table: other.t
    start_from: newest
    max_batch_size: -1
    max_quarantine: 0
    max_wait: 11m
    exclude: [x]
  - topic_regex: "orders("
    source_table: public.orders
    exclude: ["("]
  - topic: u.v
    maintenance:
      compact_every: often
      expire_every: -1h
      target_file_size: 1024
      retain_last: 0
    key: id,,x
  - just a string
  - topic: w.x
    layout: {mirror: {partition_by: ["week(ts)"]}}
  - topic: "shop.public.orders "
    table: shop.y
    key: ["order\tid"]
`

func TestParseReportsEveryProblem(t *testing.T) {
	_, err := Parse("p.yaml", []byte(badFile))
	want := `p.yaml:1: version: unknown version 2: this starter reads version 1
p.yaml:3: defaults.table: table is set per pipeline, not in defaults
p.yaml:4: defaults.max_wiat: unknown field max_wiat (did you mean max_wait?)
p.yaml:5: defaults.batch_size: "lots" is not an integer
p.yaml:7: defaults.maintenance.retention: retention 1d is shorter than retention_floor 7d: a purge could let a replayed event resurrect a row (lower retention_floor only on purpose)
p.yaml:10: pipelines[0].max_wait: "5x" is not a duration (e.g. 500ms, 2s, 1h, 30d)
p.yaml:11: pipelines[0].key: key column "id" is listed twice
p.yaml:13: pipelines[0].history_columns: set, but history: false (line 12) keeps no history table
p.yaml:14: pipelines[1].topic_glob: "a.[b": syntax error in pattern
p.yaml:15: pipelines[1].table: names one table; a topic_glob pipeline makes one table per matching topic (give the topic its own pipeline)
p.yaml:17: pipelines[2].topic_regex: give one of topic, topic_regex and topic_glob, not topic and topic_regex
p.yaml:20: pipelines[3].batch_size: given twice (first at line 19)
p.yaml:21: pipelines[4]: give one of topic, topic_regex and topic_glob
p.yaml:23: pipelines[5].maintenance.bogus: unknown field bogus
p.yaml:23: pipelines[5].maintenance.purge_every: 30s is below the shortest schedule interval, 1m (off or 0: no schedule)
p.yaml:23: pipelines[5].maintenance.retention: retention 1h is shorter than retention_floor 2h: a purge could let a replayed event resurrect a row (lower retention_floor only on purpose)
p.yaml:24: pipelines[5].bronze: "maybe" is not true or false
p.yaml:26: pipelines[6].namespace: conflicts with table "other.t", which names its namespace (give table: t, or drop namespace)
p.yaml:28: pipelines[6].start_from: "newest": give earliest or latest
p.yaml:29: pipelines[6].max_batch_size: -1 outside 0..1000000 records (0 = batches do not grow)
p.yaml:30: pipelines[6].max_quarantine: 0 outside 1..1000000 records
p.yaml:31: pipelines[6].max_wait: 11m outside (0, 10m]
p.yaml:32: pipelines[6].exclude: only a topic_regex or topic_glob pipeline excludes topics
p.yaml:33: pipelines[7].topic_regex: missing closing ): ` + "`^(?:orders()$`" + `
p.yaml:34: pipelines[7].source_table: names one table; a topic_regex pipeline makes one table per matching topic (give the topic its own pipeline)
p.yaml:35: pipelines[7].exclude[0]: missing closing ): ` + "`^(?:()$`" + `
p.yaml:38: pipelines[8].maintenance.compact_every: "often" is not a duration (e.g. 1h, 24h, 7d) or off
p.yaml:39: pipelines[8].maintenance.expire_every: -1h is negative
p.yaml:40: pipelines[8].maintenance.target_file_size: 1024 bytes is below 1 MiB (1048576)
p.yaml:41: pipelines[8].maintenance.retain_last: 0: keep at least 1 snapshot
p.yaml:42: pipelines[8].key: key column 2 is empty
p.yaml:43: pipelines[9]: "just a string" is not a mapping
p.yaml:45: pipelines[10].layout: mirror layout: layout: invalid field "week(ts)": want one of identity, bucket, truncate, year, month, day, hour
p.yaml:46: pipelines[11].topic: topic "shop.public.orders " has " " at byte 18; ` + names.TopicRule + `
p.yaml:48: pipelines[11].key: key column "order\tid" has '\t' at byte 5 (a control character); ` + names.ColumnRule
	if err == nil || err.Error() != want {
		t.Fatalf("problems:\n%v\n\nwant:\n%s", err, want)
	}
	if ps, ok := err.(Problems); !ok || len(ps) != strings.Count(want, "\n")+1 {
		t.Fatalf("error is %T with %d problems", err, len(ps))
	}
}

// Syntax errors, empty files and files that are not a mapping are one
// problem each, with the line yaml.v3 gives.
func TestParseFileShape(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"pipelines:\n\t- topic: a.b\n", "p.yaml:2: found character that cannot start any token"},
		{"", "p.yaml: empty file: give pipelines (see docs/pipelines.md)"},
		{"- topic: a.b\n", "p.yaml:1: the file must be a mapping with defaults and pipelines"},
		{"defaults:\n  batch_size: 10\n", "p.yaml: no pipelines: list them under pipelines"},
		{"pipelines: []\n", "p.yaml:1: pipelines: empty: list at least one pipeline (to stop every pipeline, use starter drop)"},
		{"pipelines:\n  - topic: a.b\n---\npipelines:\n  - topic: c.d\n", "p.yaml:3: more than one YAML document: put every pipeline in one"},
		{"pipelines:\n  - topic: a.b\n    key: {a: 1}\n", "p.yaml:3: pipelines[0].key: want a name, a comma-separated string of names or a list of names"},
		{"pipelines:\n  - topic: a.b\n    key: [a, [b]]\n", "p.yaml:3: pipelines[0].key[1]: a list item is not a name"},
		{"pipelines:\n  - topic: a.b\n    batch_size: {a: 1}\n", "p.yaml:3: pipelines[0].batch_size: a mapping is not an integer"},
		{"pipelines:\n  topic: a.b\n", "p.yaml:2: pipelines: a mapping is not a list of pipelines"},
	} {
		_, err := Parse("p.yaml", []byte(c.src))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: %v, want %s", c.src, err, c.want)
		}
	}
}

// Resolve: duplicate tables, a topic two patterns match, a topic without
// segments to name its table, a topic whose table name would break the
// name rule (upper case), a source table it cannot derive: errors; a
// pattern matching nothing, a topic the broker lacks and a batch bound
// that cannot grow: warnings.
func TestResolveProblems(t *testing.T) {
	src := `defaults:
  max_batch_size: 100
pipelines:
  - topic: srv.shop.orders
  - topic: other.shop.orders
  - topic_glob: "srv.shop.*"
  - topic_regex: "srv\\.shop\\.(items|lines)"
  - topic: lonely
  - topic: solo
    namespace: ns
    source: db
  - topic_glob: "nothing.*"
  - topic: srv.shop.missing
    max_batch_size: 0
  - topic: other.shop.Lines
`
	f, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	topics := []string{"srv.shop.orders", "other.shop.orders", "srv.shop.items", "srv.shop.lines", "lonely", "solo", "other.shop.Lines"}
	_, warns, err := f.Resolve(topics, true)
	wantErr := `p.yaml:5: pipelines[1]: table shop.orders is also the table of pipelines[0] (line 4, topic srv.shop.orders): one table has one pipeline
p.yaml:7: pipelines[3].topic_regex: topic srv.shop.items is also matched by pipelines[2] (line 6): exclude it from one
p.yaml:7: pipelines[3].topic_regex: topic srv.shop.lines is also matched by pipelines[2] (line 6): exclude it from one
p.yaml:8: pipelines[4].topic: topic lonely has no <namespace>.<table> segments to name its table: give namespace (or table)
p.yaml:11: pipelines[5].source: topic solo has no <schema>.<table> segments to name the source table: give source_table
p.yaml:15: pipelines[8].topic: topic other.shop.Lines makes the table name "shop.Lines", which has "L" at byte 5 (upper case): give table (and namespace) in its own pipeline; ` + names.TableRule
	if err == nil || err.Error() != wantErr {
		t.Fatalf("errors:\n%v\nwant:\n%s", err, wantErr)
	}
	wantWarn := `p.yaml:2: warning: defaults.max_batch_size: shop.orders: max_batch_size 100 is below batch_size 5000: its batches do not grow
p.yaml:2: warning: defaults.max_batch_size: shop.items: max_batch_size 100 is below batch_size 5000: its batches do not grow
p.yaml:2: warning: defaults.max_batch_size: shop.lines: max_batch_size 100 is below batch_size 5000: its batches do not grow
p.yaml:12: warning: pipelines[6].topic_glob: "nothing.*" matches no topic
p.yaml:13: warning: pipelines[7].topic: topic srv.shop.missing does not exist (yet): its table waits for it`
	if warns.Error() != wantWarn {
		t.Fatalf("warnings:\n%v\nwant:\n%s", warns, wantWarn)
	}
	// without the broker's topic list a pattern cannot be resolved
	_, _, err = f.Resolve(nil, false)
	if err == nil || !strings.Contains(err.Error(), "p.yaml:6: pipelines[2].topic_glob: a topic pattern needs the broker's topic list, which could not be read") {
		t.Fatalf("without topics: %v", err)
	}
}

// Table names: the topic's last segment, in the namespace given or the
// topic's second-to-last segment; a table with a dot names its namespace.
func TestTableNames(t *testing.T) {
	src := `defaults:
  namespace: lake
pipelines:
  - topic: srv.inventory.customers
  - topic: srv.inventory.orders
    namespace: sales.eu
  - topic: srv.inventory.items
    table: stock
  - topic: srv.inventory.lines
    table: a.b.order_lines
`
	f, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := f.Resolve(nil, false)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range got {
		names = append(names, p.Table)
	}
	if want := []string{"lake.customers", "sales.eu.orders", "lake.stock", "a.b.order_lines"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("tables %v, want %v", names, want)
	}
	for _, c := range []struct{ topic, ns, want string }{
		{"dbserver1.inventory.customers", "", "inventory.customers"},
		{"dbserver1.inventory.customers", "bronze", "bronze.customers"},
		{"orders", "", ""},
		{"orders", "shop", "shop.orders"},
	} {
		if got := DeriveTable(c.topic, c.ns); got != c.want {
			t.Errorf("DeriveTable(%q, %q) = %q, want %q", c.topic, c.ns, got, c.want)
		}
	}
}

func TestDurations(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		out  string
	}{
		{"2s", 2 * time.Second, "2s"}, {"500ms", 500 * time.Millisecond, "500ms"}, {"1h", time.Hour, "1h"},
		{"90m", 90 * time.Minute, "1h30m"}, {"30d", 30 * 24 * time.Hour, "30d"}, {"48h", 48 * time.Hour, "2d"}, {"1m30s", 90 * time.Second, "1m30s"},
	} {
		d, err := ParseDuration(c.in)
		if err != nil || d != c.want || FormatDuration(d) != c.out {
			t.Errorf("%s: %v %v %s, want %v %s", c.in, d, err, FormatDuration(d), c.want, c.out)
		}
	}
	if _, err := ParseDuration("3x"); err == nil || err.Error() != `"3x" is not a duration (e.g. 500ms, 2s, 1h, 30d)` {
		t.Fatal(err)
	}
}

// The example file of docs/pipelines.md parses
// and resolves into the tables its comments name.
func TestDocsExample(t *testing.T) {
	readme, err := os.ReadFile("../../docs/pipelines.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "# Many tables: starter apply\n")
	_, block, ok2 := strings.Cut(section, "```yaml\n")
	block, _, ok3 := strings.Cut(block, "```\n")
	if !ok || !ok2 || !ok3 {
		t.Fatal("docs/pipelines.md has no yaml block")
	}
	f, err := Parse("docs/pipelines.md", []byte(block))
	if err != nil {
		t.Fatal(err)
	}
	got, warns, err := f.Resolve([]string{"dbserver1.inventory.orders", "dbserver1.inventory.customers", "dbserver1.inventory.products",
		"dbserver1.inventory.tmp_load", "dbserver1.audit.logins"}, true)
	if err != nil || len(warns) != 0 {
		t.Fatalf("%v %v", err, warns)
	}
	var tables []string
	for _, p := range got {
		tables = append(tables, fmt.Sprintf("%s bronze=%v history=%v purge=%s batch=%d/%d", p.Table, p.Bronze, p.History, FormatDuration(p.Maintenance.PurgeEvery), p.Settings.MaxEvents, p.Settings.MaxBatchEvents))
	}
	want := []string{"shop.orders bronze=true history=true purge=1d batch=20000/100000", "inventory.customers bronze=true history=true purge=1d batch=5000/0",
		"inventory.products bronze=true history=false purge=1d batch=5000/0", "audit.logins bronze=false history=false purge=0s batch=5000/0"}
	if !reflect.DeepEqual(tables, want) {
		t.Fatalf("tables\n%v\nwant\n%v", tables, want)
	}
}

// Issues 34 (item 6) and 35 (item 3): table names the name rule refuses,
// given as table, as a namespace, as a table without its namespace, and a
// valid multi-part name, each with its exact error.
func TestTableNameRule(t *testing.T) {
	src := `pipelines:
  - topic: t1
    table: ../../esc.t1
  - topic: t2
    table: x/../../../../elsewhere/escaped.t2
  - topic: t3
    table: ns.a/b
  - topic: t4
    table: a..b.t5
  - topic: t5
    table: ns.a%2Fb
  - topic: t6
    table: ns.` + strings.Repeat("t", 297) + `
  - topic: t7
    table: "ns.tëst_表_🙂"
  - topic: t8
    table: "Shop.Orders "
  - topic: t9
    table: "shop.order"
  - topic: t10
    namespace: "Sales"
  - topic: t11
    table: "or ders"
  - topic: t12
    namespace: sales.eu
    table: orders
`
	_, err := Parse("p.yaml", []byte(src))
	r := "; " + names.TableRule
	want := `p.yaml:3: pipelines[0].table: table name "../../esc.t1" has "/" at byte 2 (a path separator)` + r + `
p.yaml:5: pipelines[1].table: table name "x/../../../../elsewhere/escaped.t2" has "/" at byte 1 (a path separator)` + r + `
p.yaml:7: pipelines[2].table: table name "ns.a/b" has "/" at byte 4 (a path separator)` + r + `
p.yaml:9: pipelines[3].table: table name "a..b.t5" has an empty part (a dot at an end, or two in a row)` + r + `
p.yaml:11: pipelines[4].table: table name "ns.a%2Fb" has "%" at byte 4 (an escape)` + r + `
p.yaml:13: pipelines[5].table: table name "ns.ttttttttttttttttttttttttttttttttttttt"… (300 bytes) is 300 bytes long, more than 128` + r + `
p.yaml:15: pipelines[6].table: table name "ns.tëst_表_🙂" has "ë" at byte 4 (not ASCII)` + r + `
p.yaml:17: pipelines[7].table: table name "Shop.Orders " has "S" at byte 0 (upper case)` + r + `
p.yaml:19: pipelines[8].table: table name "shop.order" has the part "order", a word SQL reserves (engines must quote it)` + r + `
p.yaml:21: pipelines[9].namespace: namespace "Sales" has "S" at byte 0 (upper case)` + r + `
p.yaml:23: pipelines[10].table: table "or ders" has " " at byte 2 (white space)` + r
	if err == nil || err.Error() != want {
		t.Fatalf("errors:\n%v\nwant:\n%s", err, want)
	}
	f, err := Parse("p.yaml", []byte("pipelines:\n  - topic: t12\n    namespace: sales.eu\n    table: orders\n"))
	if err != nil {
		t.Fatal(err)
	}
	ps, _, err := f.Resolve(nil, false)
	if err != nil || len(ps) != 1 || ps[0].Table != "sales.eu.orders" {
		t.Fatalf("%v %+v", err, ps)
	}
}

// delete_format: from the defaults or the pipeline, position by default
// (zero), a bad value a problem, and a change a fixed (not live) setting.
func TestDeleteFormatSetting(t *testing.T) {
	const src = `version: 1
defaults:
  delete_format: dv
pipelines:
  - topic: s.public.a
    key: id
  - topic: s.public.b
    key: id
    delete_format: position
`
	f, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := f.Resolve([]string{"s.public.a", "s.public.b"}, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].DeleteFormat != layout.DeleteVector || got[1].DeleteFormat != "" {
		t.Fatalf("delete formats: %+v", got)
	}
	if _, err := Parse("p.yaml", []byte("version: 1\npipelines:\n  - topic: s.public.a\n    delete_format: equality\n")); err == nil ||
		err.Error() != `p.yaml:4: pipelines[0].delete_format: layout: invalid field "equality": want a delete format, position (v2 position deletes) or dv (v3 deletion vectors)` {
		t.Errorf("bad delete_format: %v", err)
	}
	observed := got[0]
	observed.DeleteFormat = ""
	changes := Diff(got[0], observed)
	if len(changes) != 1 || changes[0] != (Change{Field: "delete_format", Old: "position", New: "dv", Live: false}) {
		t.Errorf("diff: %+v", changes)
	}
}

// A table's Parquet compression in the layout block: normalized, kept
// beside bronze's default partitioning, refused with its line when the
// codec is unknown, and a change is a live layout change.
func TestCompressionSetting(t *testing.T) {
	const src = `version: 1
pipelines:
  - topic: s.public.a
    key: id
    layout:
      mirror: {compression: Snappy}
      bronze: {compression: "zstd:9"}
`
	f, err := Parse("p.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := f.Resolve([]string{"s.public.a"}, true)
	if err != nil {
		t.Fatal(err)
	}
	want := layout.Tables{Mirror: layout.Spec{Compression: "snappy"}, Bronze: layout.Spec{Compression: "zstd:9"}}
	if len(got) != 1 || !reflect.DeepEqual(got[0].Layout, want) {
		t.Fatalf("layout: %+v, want %+v", got, want)
	}
	if _, err := Parse("p.yaml", []byte("version: 1\npipelines:\n  - topic: s.public.a\n    layout: {history: {compression: lz4}}\n")); err == nil ||
		err.Error() != `p.yaml:4: pipelines[0].layout: history layout: layout: invalid field "lz4": want a Parquet codec, zstd[:1-22], snappy, gzip[:1-9] or uncompressed` {
		t.Errorf("bad compression: %v", err)
	}
	observed := got[0]
	observed.Layout = layout.Tables{Mirror: layout.Spec{Compression: "snappy"}}
	changes := Diff(got[0], observed)
	if len(changes) != 1 || changes[0] != (Change{Field: "layout.bronze", Old: "partition_by [day(_ingested_at)]", New: "partition_by [day(_ingested_at)] compression zstd:9", Live: true}) {
		t.Errorf("diff: %+v", changes)
	}
}

// TestDevExampleFile: examples/pipelines-dev.yaml (the tutorial's, runnable
// on the dev stack) resolves against the topics `starter produce` writes in
// docs/tutorial.md into exactly its two tables, none of which is a table of
// examples/pipelines.yaml or the tutorial's shop.orders.
func TestDevExampleFile(t *testing.T) {
	resolve := func(name string, topics []string) []Pipeline {
		t.Helper()
		data, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := Parse(name, data)
		if err != nil {
			t.Fatal(err)
		}
		got, warns, err := f.Resolve(topics, true)
		if err != nil || len(warns) != 0 {
			t.Fatalf("%s: %v %v", name, err, warns)
		}
		return got
	}
	dev := resolve("../../examples/pipelines-dev.yaml", []string{"dev.mysql.inventory.products", "dev.pg.inventory.products", "shop.public.orders"})
	var got []string
	for _, p := range dev {
		got = append(got, fmt.Sprintf("%s ← %s key=%v bronze=%v history=%v batch=%d wait=%s", p.Table, p.Topic, p.Key, p.Bronze, p.History, p.Settings.MaxEvents, p.Settings.MaxWait))
	}
	want := []string{"tutorial.mysql_products ← dev.mysql.inventory.products key=[id] bronze=true history=true batch=100 wait=500ms",
		"tutorial.pg_products ← dev.pg.inventory.products key=[id] bronze=true history=false batch=100 wait=500ms"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("pipelines-dev.yaml:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	prod := resolve("../../examples/pipelines.yaml", []string{"dbserver1.inventory.orders", "dbserver1.inventory.customers",
		"dbserver1.inventory.products", "dbserver1.audit.login_events", "dbserver1.audit.access_events"})
	taken := map[string]bool{"shop.orders": true} // the tutorial's own table
	for _, p := range dev {
		taken[p.Table] = true
	}
	for _, p := range prod {
		if taken[p.Table] {
			t.Errorf("examples/pipelines.yaml: table %s is also the tutorial's (docs/tutorial.md): the tutorial's apply would be refused", p.Table)
		}
	}
}
