//go:build e2e

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/workflows"
)

// A Debezium blocking snapshot of one table of a group (an operator's
// execute-snapshot signal, or a table added to the connector) writes its
// reads at (0, L), L the snapshot's WAL position: below every streamed
// change, so they move neither the table's watermark nor its applied
// position, and carry no transaction. Here the connector paused
// streaming after transaction 100 (commit 101) and took the snapshot at
// LSN 300, after transaction 200 (commit 201) inserted account 2 and
// transfer 2: accounts' topic holds account 1 and the read of account 2,
// the transaction topic only END 100:101. A cut at 101 would hold
// account 2 without transfer 2: half of transaction 200 (a breaker's
// run, 2026-12-07: cut 1 was published so). Now no cut is published
// while the mirror holds reads above W (lakemirror.read-position) or
// ends inside the source snapshot (snapshot_open); once streaming goes
// on (transaction 200's events, then 400's) a cut above the reads is
// published, and it holds both halves of transaction 200.
func TestGroupCutAfterBlockingSnapshotReads(t *testing.T) {
	s := startStack(t)
	ctx := context.Background()
	for _, topic := range []string{"srv.shop.accounts", "srv.shop.transfers", "srv.transaction"} {
		if err := s.r.Kafka.CreateTopic(ctx, topic, 1); err != nil {
			t.Fatal(err)
		}
	}
	produce := func(topic string, id int, value string) { produceKeyed(t, s, topic, id, value) }
	change, end := pgTxChange, pgEnd
	// read is a blocking snapshot read at LSN 300 (its _seq (0, 300))
	read := func(after, mark string) string {
		return strings.Replace(strings.Replace(string(sample.PostgresChange("r", "null", after, 300).Value),
			`"snapshot":"false"`, `"snapshot":"`+mark+`"`, 1), `"txId":300,`, ``, 1)
	}
	produce("srv.shop.accounts", 1, change("c", `{"id":1,"balance":10}`, 100, 100))
	produce("srv.shop.accounts", 2, read(`{"id":2,"balance":89}`, "true"))
	produce("srv.shop.transfers", 1, change("c", `{"id":1,"amount":5}`, 99, 100))
	produce("srv.transaction", 100, end(100, 101, `{"data_collection":"shop.accounts","event_count":1},{"data_collection":"shop.transfers","event_count":1}`))
	file := filepath.Join(t.TempDir(), "pipelines.yaml")
	if err := os.WriteFile(file, []byte(`defaults:
  key: id
  max_wait: 500ms
  group: shop
  maintenance: {compact_every: "off", expire_every: "off", purge_every: "off"}
groups:
  shop:
    transaction_topic: srv.transaction
    cut_every: 20s
pipelines:
  - topic: srv.shop.accounts
  - topic: srv.shop.transfers
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errw, code := s.cli("apply", "-f", file, "--yes"); code != exitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errw)
	}
	g := awaitGroupCut(t, s, "shop", 3*time.Minute, "a cut given up", func(g workflows.GroupCut) bool {
		return strings.Contains(g.LastAbort, "source snapshot reads taken at") || g.Published != nil
	})
	if g.Published != nil {
		t.Fatalf("cut %d published at W %s while accounts holds a read taken at LSN 300, above it", g.Published.Number, g.Published.W)
	}
	want := "publishing cut 1 failed: InvalidTableSpec: lake: publish a cut: table shop.accounts: a table is past the cut: its mirror holds PostgreSQL source snapshot reads taken at 000000000000012c0000000000000000, above W 00000000000000650000000000000000"
	if !strings.Contains(g.LastAbort, want) {
		t.Fatalf("last abort %q, want it to hold %q", g.LastAbort, want)
	}
	// streaming goes on: transaction 200 (both halves), then 400
	produce("srv.shop.accounts", 3, read(`{"id":3,"balance":1}`, "last"))
	produce("srv.shop.accounts", 2, change("c", `{"id":2,"balance":89}`, 199, 200))
	produce("srv.shop.transfers", 2, change("c", `{"id":2,"amount":7}`, 200, 200))
	produce("srv.transaction", 200, end(200, 201, `{"data_collection":"shop.accounts","event_count":1},{"data_collection":"shop.transfers","event_count":1}`))
	produce("srv.shop.accounts", 1, change("u", `{"id":1,"balance":3}`, 399, 400))
	produce("srv.shop.transfers", 3, change("c", `{"id":3,"amount":7}`, 400, 400))
	produce("srv.transaction", 400, end(400, 401, `{"data_collection":"shop.accounts","event_count":1},{"data_collection":"shop.transfers","event_count":1}`))
	g = awaitGroupCut(t, s, "shop", 4*time.Minute, "a cut", func(g workflows.GroupCut) bool { return g.Published != nil })
	ids := func(name string, snapshot int64) string {
		tn, err := lake.ParseTableName(name)
		if err != nil {
			t.Fatal(err)
		}
		return mirrorRows(t, s.r.Catalog, tn, snapshot, "id")
	}
	got := map[string]string{}
	for _, tg := range g.Published.Tagged {
		got[tg.Table] = ids(tg.Table, tg.Mirror)
	}
	if want := map[string]string{"shop.accounts": "1,2,3", "shop.transfers": "1,2,3"}; g.Published.W != "00000000000001910000000000000000" ||
		got["shop.accounts"] != want["shop.accounts"] || got["shop.transfers"] != want["shop.transfers"] {
		t.Fatalf("cut %d at W %s: %v; want W (401, 0) and %v", g.Published.Number, g.Published.W, got, want)
	}
}
