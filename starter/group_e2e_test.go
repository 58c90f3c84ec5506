//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/twmb/franz-go/pkg/kgo"
	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/converter"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/cuts"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/workflows"
)

// A source group on the embedded stack: apply starts two tables of group
// shop (declared under groups with its transaction topic) and their
// group's workflow; start --group adds a third table to it. Each table's
// batches report to the group, whose first cut interval (a minute) reads
// the transaction topic's two ENDs: the cut is the second END (both
// transactions complete in every table), and status shows the group.
func TestGroupOnTheStack(t *testing.T) {
	s := startStack(t)
	ctx := context.Background()
	c := s.r.Client
	produce := func(topic string, values ...string) {
		if err := s.r.Kafka.CreateTopic(ctx, topic, 1); err != nil {
			t.Fatal(err)
		}
		for _, v := range values {
			if err := s.r.Kafka.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(`{"id":1}`), Value: []byte(sourceOfTopic(topic, v))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// transaction 100 (commit at 101) writes accounts and transfers,
	// transaction 102 (commit at 103) accounts alone
	produce("srv.shop.accounts", string(sample.PostgresChange("c", "null", `{"id":1,"balance":10}`, 100).Value),
		string(sample.PostgresChange("u", "null", `{"id":1,"balance":5}`, 102).Value))
	produce("srv.shop.transfers", strings.Replace(string(sample.PostgresChange("c", "null", `{"id":1,"amount":5}`, 99).Value), `"txId":99`, `"txId":100`, 1))
	produce("srv.shop.audit")
	produce("srv.transaction",
		`{"status":"END","id":"100:101","event_count":2,"data_collections":[{"data_collection":"shop.accounts","event_count":1},{"data_collection":"shop.transfers","event_count":1}],"ts_ms":1767258000101}`,
		`{"status":"END","id":"102:103","event_count":1,"data_collections":[{"data_collection":"shop.accounts","event_count":1}],"ts_ms":1767258000103}`)
	file := filepath.Join(t.TempDir(), "pipelines.yaml")
	if err := os.WriteFile(file, []byte(`defaults:
  key: id
  max_wait: 500ms
  group: shop
  maintenance: {compact_every: "off", expire_every: "off", purge_every: "off"}
groups:
  shop:
    transaction_topic: srv.transaction
    cut_every: 1m
pipelines:
  - topic: srv.shop.accounts
  - topic: srv.shop.transfers
`), 0o644); err != nil {
		t.Fatal(err)
	}
	started := time.Now()
	if out, errw, code := s.cli("apply", "-f", file, "--yes"); code != exitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errw)
	}
	if out, errw, code := s.cli("start", "srv.shop.audit", "--key", "id", "--group", "shop", "--transaction-topic", "srv.transaction", "--schedules=false"); code != exitOK {
		t.Fatalf("start: exit %d\n%s\n%s", code, out, errw)
	}
	for _, table := range []string{"shop.accounts", "shop.transfers"} {
		waitFor(t, time.Minute, table+" caught up", func() bool { return statusOf(t, c, table).TotalLag == 0 && statusOf(t, c, table).Totals.Batches > 0 })
	}
	if time.Since(started) > 50*time.Second {
		t.Skip("the tables took too long to catch up for the first cut interval to find them caught up")
	}
	query := func() workflows.GroupCut {
		v, err := c.QueryWorkflow(ctx, workflows.GroupWorkflowID("shop"), "", workflows.QueryCut)
		if err != nil {
			t.Fatal(err)
		}
		var g workflows.GroupCut
		if err := v.Get(&g); err != nil {
			t.Fatal(err)
		}
		return g
	}
	var g workflows.GroupCut
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(200 * time.Millisecond) {
		if g = query(); g.Ends == 2 && g.Published != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the group's first read and cut: not within 2 minutes: %+v (pending %+v)", g, g.Pending)
		}
	}
	w := cdc.PostgresSeq(103, 0).Hex()
	if g.Published == nil || g.Published.Number != 1 || g.Published.W != w || g.Published.TxID != "102:103" || g.Published.SourceTsMs != 1767258000103 {
		t.Fatalf("published cut %+v, want cut 1 at %s (END 102:103)", g.Published, w)
	}
	tagged := g.Published.Tagged
	want := workflows.GroupCut{Group: "shop", TransactionTopic: "srv.transaction", Number: 1, W: w, TxID: "102:103",
		SourceTsMs: 1767258000103, Tables: []string{"shop.accounts", "shop.audit", "shop.transfers"}, ReadOffsets: g.ReadOffsets,
		Reports: g.Reports, Ends: 2, Published: g.Published, Pending: g.Pending}
	if !reflect.DeepEqual(g, want) || g.Reports < 2 || g.ReadOffsets[0] != 2 || g.Aborts != 0 {
		t.Fatalf("cut\n got  %+v\n want %+v (2 reports or more, read offset 2, no cut given up)", g, want)
	}
	// the cut in the tables: each mirror and history tagged cut-1 and
	// consistent at the snapshots the group recorded, one _cuts row each
	cat := s.r.Catalog
	if len(tagged) != 3 {
		t.Fatalf("tagged %+v, want the 3 tables", tagged)
	}
	for _, tg := range tagged {
		name, err := lake.ParseTableName(tg.Table)
		if err != nil {
			t.Fatal(err)
		}
		for ident, id := range map[string]int64{"": tg.Mirror, "_history": tg.History} {
			tbl, err := lake.LoadTable(ctx, cat, name.Ident(ident))
			if err != nil {
				t.Fatal(err)
			}
			if tg.Table == "shop.audit" { // no change yet: empty at the cut (not created), no snapshot to tag
				if id != 0 || tbl != nil {
					t.Errorf("%s%s: tagged %d, table %v; want none, not created", tg.Table, ident, id, tbl != nil)
				}
				continue
			}
			if id == 0 {
				t.Fatalf("%s%s: no snapshot tagged (%+v)", tg.Table, ident, tg)
			}
			if got, want := cuts.Refs(tbl), map[string]int64{"cut-1": id, "consistent": id}; !reflect.DeepEqual(got, want) {
				t.Errorf("%s%s tags %v, want %v", tg.Table, ident, got, want)
			}
		}
	}
	first, _ := lake.ParseTableName("shop.accounts")
	rows, err := cuts.Read(ctx, cat, first, "shop")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range rows {
		lines = append(lines, fmt.Sprintf("%d %s %s %d %s", r.Number, r.W, r.TxID, r.SourceTsMs, r.Table))
	}
	wantLines := []string{"1 " + w + " 102:103 1767258000103 shop.accounts", "1 " + w + " 102:103 1767258000103 shop.audit", "1 " + w + " 102:103 1767258000103 shop.transfers"}
	if !reflect.DeepEqual(lines, wantLines) {
		t.Errorf("_cuts rows %q, want %q", lines, wantLines)
	}
	// accounts moves on past the cut (transaction 104): its tag still
	// reads the balance at the cut, the table the new one
	balance := func(snapshot int64) string { return mirrorRows(t, cat, first, snapshot, "id", "balance") }
	if err := s.r.Kafka.Produce(ctx, &kgo.Record{Topic: "srv.shop.accounts", Key: []byte(`{"id":1}`),
		Value: []byte(sourceOfTopic("srv.shop.accounts", string(sample.PostgresChange("u", "null", `{"id":1,"balance":7}`, 104).Value)))}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, time.Minute, "accounts past the cut", func() bool { return balance(0) == "1=7" })
	if got := balance(tagged[0].Mirror); got != "1=5" {
		t.Errorf("accounts at cut-1: %s, want 1=5 (the balance at W)", got)
	}
	// apply gave the group's workflow the group's cut_every
	it := c.GetWorkflowHistory(ctx, workflows.GroupWorkflowID("shop"), "", false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
	ev, err := it.Next()
	if err != nil {
		t.Fatal(err)
	}
	var in workflows.GroupInput
	if err := converter.GetDefaultDataConverter().FromPayloads(ev.GetWorkflowExecutionStartedEventAttributes().GetInput(), &in); err != nil || in.CutEvery != time.Minute {
		t.Errorf("group input %+v (%v), want cut_every 1m", in, err)
	}
	checkCutCommands(t, s, tagged, w)
}

// checkCutCommands runs starter cut and starter status against a stack
// whose group shop published cut 1 at w (END 102:103), tagged as tagged.
func checkCutCommands(t *testing.T, s *e2eStack, tagged []payload.CutTagged, w string) {
	t.Helper()
	fields := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	snap := func(id int64) string {
		if id == 0 {
			return "-"
		}
		return strconv.FormatInt(id, 10)
	}
	for _, arg := range []string{"shop", "shop.transfers"} {
		out, errw, code := s.cli("cut", arg)
		if code != exitOK {
			t.Fatalf("cut %s: exit %d\n%s\n%s", arg, code, out, errw)
		}
		text := fields(out)
		for _, want := range []string{"group shop cut 1 (tag cut-1) W commit at lsn 0/67 (_seq " + w + ") transaction 102:103 source commit time 2026-01-01T09:00:00.103Z published ",
			"TABLE MIRROR SNAPSHOT HISTORY SNAPSHOT TAG",
			"read every table at tag cut-1: Spark and Trino `SELECT * FROM shop.accounts FOR VERSION AS OF 'cut-1'`"} {
			if !strings.Contains(text, want) {
				t.Errorf("cut %s: no %q in\n%s", arg, want, out)
			}
		}
		for _, tg := range tagged {
			tag := "cut-1"
			if tg.Mirror == 0 && tg.History == 0 {
				tag = "- (empty at the cut)"
			}
			want := fmt.Sprintf("%s %s %s %s_history %s %s", tg.Table, tg.Table, snap(tg.Mirror), tg.Table, snap(tg.History), tag)
			if !strings.Contains(text, want) {
				t.Errorf("cut %s: no %q in\n%s", arg, want, out)
			}
		}
	}
	out, errw, code := s.cli("cut", "shop.accounts", "--at", w, "--output", "json")
	var v cutView
	if err := json.Unmarshal([]byte(out), &v); code != exitOK || err != nil {
		t.Fatalf("cut --output json: exit %d, %v\n%s\n%s", code, err, out, errw)
	}
	if v.Group != "shop" || v.Cut != 1 || v.Tag != "cut-1" || v.W != w || v.TxID != "102:103" || v.SourceTs == nil || v.SourceTs.UnixMilli() != 1767258000103 || len(v.Tables) != len(tagged) {
		t.Fatalf("cut JSON %+v", v)
	}
	for i, tg := range tagged {
		if got := v.Tables[i]; got.Table != tg.Table || got.MirrorSnapshot != tg.Mirror || got.HistorySnapshot != tg.History || got.Mirror != tg.Table || got.History != tg.Table+"_history" {
			t.Errorf("cut JSON table %+v, want %+v", got, tg)
		}
	}
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"cut", "shop", "--at", "2025-12-31T00:00:00Z"}, exitNotFound, "starter: --at 2025-12-31T00:00:00Z is before the first cut of group shop (cut 1 at " + w + ", source commit time 2026-01-01T09:00:00.103Z)\n"},
		{[]string{"cut", "nosuch"}, exitNotFound, "starter: no such group nosuch: no table of it runs (workflow lakemirror-group-nosuch does not exist); a table joins a group with start --group or group: in the pipelines file\n"},
		{[]string{"cut", "shop.nosuch"}, exitNotFound, "starter: no such table shop.nosuch: no pipeline runs it (workflow lakemirror-table-shop.nosuch does not exist); `starter list` shows the running tables\n"},
	} {
		out, errw, code := s.cli(c.args...)
		if code != c.code || errw != c.want {
			t.Errorf("%v: exit %d, stderr %q (stdout %q); want exit %d, %q", c.args, code, errw, out, c.code, c.want)
		}
	}

	out, errw, code = s.cli("status", "shop.accounts")
	text := fields(out)
	if code != exitOK || !strings.Contains(text, "group shop, transaction topic srv.transaction group cut cut 1 (tag cut-1) at commit at lsn 0/67 (_seq "+w+"), source commit 2026-01-01T09:00:00.103Z, ") ||
		!strings.Contains(text, " behind; published ") {
		t.Fatalf("status: exit %d\n%s\n%s", code, out, errw)
	}
	out, errw, code = s.cli("status", "shop.accounts", "--output", "json")
	var st struct {
		Table    string          `json:"table"`
		GroupCut *groupCutStatus `json:"group_cut"`
	}
	if err := json.Unmarshal([]byte(out), &st); code != exitOK || err != nil || st.GroupCut == nil {
		t.Fatalf("status --output json: exit %d, %v\n%s\n%s", code, err, out, errw)
	}
	g := st.GroupCut
	if st.Table != "shop.accounts" || g.Group != "shop" || !g.Running || g.Number != 1 || g.W != w || g.TxID != "102:103" || g.SourceTs == nil ||
		g.SourceTs.UnixMilli() != 1767258000103 || g.LagSeconds == nil || *g.LagSeconds < float64(time.Since(time.UnixMilli(1767258000103))/time.Second)-60 || g.PublishedAt == nil {
		t.Fatalf("status group_cut %+v", g)
	}
}

// sourceOfTopic gives a sample PostgreSQL change event (source table
// public.orders) the source schema and table of topic's last two
// segments, as Debezium writes them: the group's data collection check
// (start and apply) reads them.
func sourceOfTopic(topic, value string) string {
	segs := strings.Split(topic, ".")
	return strings.Replace(value, `"schema":"public","table":"orders"`,
		fmt.Sprintf(`"schema":%q,"table":%q`, segs[len(segs)-2], segs[len(segs)-1]), 1)
}

// produceKeyed produces value to topic on s's Kafka with the key
// {"id":id}, its source table set to the topic's (sourceOfTopic).
func produceKeyed(t *testing.T, s *e2eStack, topic string, id int, value string) {
	t.Helper()
	if err := s.r.Kafka.Produce(context.Background(), &kgo.Record{Topic: topic, Key: fmt.Appendf(nil, `{"id":%d}`, id), Value: []byte(sourceOfTopic(topic, value))}); err != nil {
		t.Fatal(err)
	}
}

// pgTxChange is a sample PostgreSQL streamed change of transaction tx at
// lsn (its _seq (lsn, lsn)), without a transaction block.
func pgTxChange(op, after string, lsn, tx int) string {
	return strings.Replace(string(sample.PostgresChange(op, "null", after, lsn).Value), fmt.Sprintf(`"txId":%d`, lsn), fmt.Sprintf(`"txId":%d`, tx), 1)
}

// pgEnd is the END record of transaction tx committed at LSN commit, with
// the data collections' counts (JSON objects) counts.
func pgEnd(tx, commit int, counts string) string {
	return fmt.Sprintf(`{"status":"END","id":"%d:%d","event_count":2,"data_collections":[%s],"ts_ms":%d}`, tx, commit, counts, 1767258000000+commit)
}

// awaitGroupCut polls group's cut query (queryGroupCut; a failed query
// counts as no cut yet) until done holds, within d, and returns that cut;
// the test fails naming what it waited for.
func awaitGroupCut(t *testing.T, s *e2eStack, group string, d time.Duration, what string, done func(workflows.GroupCut) bool) workflows.GroupCut {
	t.Helper()
	for deadline := time.Now().Add(d); ; time.Sleep(500 * time.Millisecond) {
		g, _ := queryGroupCut(context.Background(), s.r.Client, group)
		if done(g) {
			return g
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not within %v: %+v (pending %+v, last abort %q)", what, d, g, g.Pending, g.LastAbort)
		}
	}
}

// mirrorRows reads the columns cols of table name's mirror at Iceberg
// snapshot snapshot (0: the current one) from cat: each row's values
// joined by "=", the rows sorted and joined by ","; "(none)" when the
// mirror does not exist.
func mirrorRows(t *testing.T, cat catalog.Catalog, name lake.TableName, snapshot int64, cols ...string) string {
	t.Helper()
	ctx := context.Background()
	tbl, err := lake.LoadTable(ctx, cat, name.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	if tbl == nil {
		return "(none)"
	}
	opts := []table.ScanOption{table.WithSelectedFields(cols...)}
	if snapshot != 0 {
		opts = append(opts, table.WithSnapshotID(snapshot))
	}
	at, err := tbl.Scan(opts...).ToArrowTable(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer at.Release()
	var out []string
	tr := array.NewTableReader(at, -1)
	defer tr.Release()
	for tr.Next() {
		rec := tr.RecordBatch()
		for i := range int(rec.NumRows()) {
			vals := make([]string, len(cols))
			for c := range cols {
				vals[c] = rec.Column(c).ValueStr(i)
			}
			out = append(out, strings.Join(vals, "="))
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// start --group and apply refuse a grouped table whose topic's change
// events come from another data collection than the group would match it
// by: a SQL Server topic <prefix>.<db>.<schema>.<table> whose events name
// testDB.dbo.orders (three parts), while the topic's last two segments
// give dbo.orders; the message names the collection and how to go on.
// With --source-table testDB.dbo.orders the table starts.
func TestStartGroupRefusesAnotherDataCollection(t *testing.T) {
	s := startStack(t)
	ctx := context.Background()
	topic := "mssql.testDB.dbo.orders"
	if err := s.r.Kafka.CreateTopic(ctx, topic, 1); err != nil {
		t.Fatal(err)
	}
	value := `{"before":null,"after":{"id":1},"source":{"version":"2.7.0.Final","connector":"sqlserver","name":"mssql","ts_ms":1767258000000,"snapshot":"false","db":"testDB","sequence":null,"schema":"dbo","table":"orders","change_lsn":"00000025:00000d08:0025","commit_lsn":"00000025:00000d08:0025","event_serial_no":1},"op":"c","ts_ms":1767258000001}`
	if err := s.r.Kafka.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(`{"id":1}`), Value: []byte(value)}); err != nil {
		t.Fatal(err)
	}
	want := "starter: mssql.orders: the change events of topic mssql.testDB.dbo.orders come from data collection \"testDB.dbo.orders\" (partition 0 offset 0), but group mssql would match the table by \"dbo.orders\" (the topic's last two segments): the group's transaction END events name \"testDB.dbo.orders\", so its cuts would not wait for this table's transactions; start it with --source-table testDB.dbo.orders (in pipelines YAML: source_table: testDB.dbo.orders)\n"
	out, errw, code := s.cli("start", topic, "--table", "mssql.orders", "--key", "id", "--group", "mssql", "--transaction-topic", "mssql.transaction", "--schedules=false")
	if code != exitUsage || out != "" || errw != want {
		t.Fatalf("start: exit %d\nstdout %q\nstderr %q\nwant exit %d and\n%q", code, out, errw, exitUsage, want)
	}
	file := filepath.Join(t.TempDir(), "pipelines.yaml")
	if err := os.WriteFile(file, []byte(`groups:
  mssql:
    transaction_topic: mssql.transaction
pipelines:
  - topic: mssql.testDB.dbo.orders
    table: mssql.orders
    key: id
    group: mssql
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, errw, code := s.cli("apply", "-f", file, "--yes"); code != exitUsage || errw != want {
		t.Fatalf("apply: exit %d\nstderr %q\nwant exit %d and\n%q", code, errw, exitUsage, want)
	}
	if out, errw, code := s.cli("start", topic, "--table", "mssql.orders", "--key", "id", "--group", "mssql", "--transaction-topic", "mssql.transaction",
		"--source-table", "testDB.dbo.orders", "--schedules=false"); code != exitOK {
		t.Fatalf("start --source-table testDB.dbo.orders: exit %d\n%s\n%s", code, out, errw)
	}
	var reg workflows.GroupCut
	waitFor(t, time.Minute, "group mssql lists mssql.orders", func() bool {
		v, err := s.r.Client.QueryWorkflow(ctx, workflows.GroupWorkflowID("mssql"), "", workflows.QueryCut)
		if err != nil {
			return false
		}
		return v.Get(&reg) == nil && len(reg.Tables) == 1
	})
	if reg.Tables[0] != "mssql.orders" {
		t.Fatalf("group mssql tables %v, want [mssql.orders]", reg.Tables)
	}
}

// A grouped SQL Server table whose topic was empty at its start (the
// starter could not check it) holds the group's cuts while the
// transaction topic's ENDs name a collection no table of the group has
// and no event has confirmed its own (no cut begins; the cut query and
// status say why and how to go on), and blocks at its first batch,
// before writing anything, when its events name a data collection the
// group does not match it by; stopped and started again with
// --source-table, it applies the batch and no longer holds the cuts.
func TestGroupBlocksOnAnotherDataCollection(t *testing.T) {
	s := startStack(t)
	ctx := context.Background()
	c := s.r.Client
	topic := "mssql.testDB.dbo.orders"
	for _, tp := range []string{topic, "mssql.transaction"} {
		if err := s.r.Kafka.CreateTopic(ctx, tp, 1); err != nil {
			t.Fatal(err)
		}
	}
	if out, errw, code := s.cli("start", topic, "--table", "mssql.orders", "--key", "id", "--group", "mssql", "--transaction-topic", "mssql.transaction",
		"--max-wait", "500ms", "--schedules=false", "--cut-every", "10s"); code != exitOK {
		t.Fatalf("start on an empty topic: exit %d\n%s\n%s", code, out, errw)
	}
	end := `{"status":"END","id":"00000025:00000d08:0025","event_count":1,"data_collections":[{"data_collection":"testDB.dbo.orders","event_count":1}],"ts_ms":1767258000002}`
	if err := s.r.Kafka.Produce(ctx, &kgo.Record{Topic: "mssql.transaction", Value: []byte(end)}); err != nil {
		t.Fatal(err)
	}
	groupCut := func() workflows.GroupCut {
		t.Helper()
		g, err := queryGroupCut(ctx, c, "mssql")
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	note := `no change event has named its data collection "dbo.orders" yet, and the transaction topic's ENDs name testDB.dbo.orders, which no table of the group has: ` +
		"if one of them is this table's source table, stop the table and start it again with --source-table <that collection>; " +
		"if none is, its first change event confirms it, or stop it and start it again with --source-table dbo.orders"
	waitFor(t, 2*time.Minute, "the group read the END", func() bool { return groupCut().Ends == 1 })
	time.Sleep(12 * time.Second) // a cut interval: none begins
	g := groupCut()
	if want := []workflows.GroupHold{{Table: "mssql.orders", Collection: "dbo.orders", Unconfirmed: true, Note: note}}; !reflect.DeepEqual(g.Holds, want) ||
		g.Pending != nil || g.Published != nil || g.Aborts != 0 {
		t.Fatalf("the group with an unconfirmed table: holds %+v, pending %+v, published %+v, %d given up; want holds %+v and no cut", g.Holds, g.Pending, g.Published, g.Aborts, want)
	}
	if out, errw, code := s.cli("status", "mssql.orders"); code != exitOK || !strings.Contains(out, "cut held by") || !strings.Contains(out, "mssql.orders: "+note) {
		t.Fatalf("status of the unconfirmed table: exit %d\n%s\n%s", code, out, errw)
	}
	value := `{"before":null,"after":{"id":1},"source":{"version":"2.7.0.Final","connector":"sqlserver","name":"mssql","ts_ms":1767258000000,"snapshot":"false","db":"testDB","sequence":null,"schema":"dbo","table":"orders","change_lsn":"00000025:00000d08:0025","commit_lsn":"00000025:00000d08:0025","event_serial_no":1},"op":"c","ts_ms":1767258000001}`
	if err := s.r.Kafka.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(`{"id":1}`), Value: []byte(value)}); err != nil {
		t.Fatal(err)
	}
	var st workflows.Status
	waitFor(t, 2*time.Minute, "mssql.orders blocked", func() bool {
		st = statusOf(t, c, "mssql.orders")
		return st.Phase == workflows.PhaseBlocked
	})
	want := `: the change event at mssql.testDB.dbo.orders/0@0 comes from data collection "testDB.dbo.orders", but group mssql matches the table by "dbo.orders" (the topic's last two segments); ` +
		`the group's transaction END events name "testDB.dbo.orders", so its cuts would not wait for this table's transactions. Nothing of the batch was written. ` +
		`To go on: starter stop mssql.orders, then start it again with --source-table testDB.dbo.orders (pipelines YAML: source_table: testDB.dbo.orders, then starter apply); ` +
		`if the topic holds more than one source table, the table cannot be in a group with a transaction topic`
	if !strings.Contains(st.LastError, "table mssql.orders, batch ") || !strings.Contains(st.LastError, want) {
		t.Fatalf("blocked with\n%s\nwant it to hold\n%s", st.LastError, want)
	}
	if st.Totals.Batches != 0 || st.Totals.Changes != 0 {
		t.Fatalf("blocked table's totals %+v, want no batch applied", st.Totals)
	}
	if _, errw, code := s.cli("stop", "mssql.orders"); code != exitOK {
		t.Fatalf("stop: exit %d\n%s", code, errw)
	}
	if err := c.GetWorkflow(ctx, workflows.WorkflowID("mssql.orders"), "").Get(ctx, nil); err != nil {
		t.Fatalf("the stopped table's workflow: %v", err)
	}
	if out, errw, code := s.cli("start", topic, "--table", "mssql.orders", "--key", "id", "--group", "mssql", "--transaction-topic", "mssql.transaction",
		"--source-table", "testDB.dbo.orders", "--max-wait", "500ms", "--schedules=false"); code != exitOK {
		t.Fatalf("start --source-table testDB.dbo.orders: exit %d\n%s\n%s", code, out, errw)
	}
	waitFor(t, 2*time.Minute, "mssql.orders applied the record", func() bool {
		st = statusOf(t, c, "mssql.orders")
		return st.Totals.Changes == 1 && st.TotalLag == 0
	})
	if st.Phase == workflows.PhaseBlocked || st.LastError != "" {
		t.Fatalf("after the start with --source-table: phase %s, error %q", st.Phase, st.LastError)
	}
	if g := groupCut(); slices.ContainsFunc(g.Holds, func(h workflows.GroupHold) bool { return h.Unconfirmed }) || len(g.Foreign) != 0 {
		t.Fatalf("after the start with --source-table: holds %+v, foreign %v; want none unconfirmed, none foreign", g.Holds, g.Foreign)
	}
}
