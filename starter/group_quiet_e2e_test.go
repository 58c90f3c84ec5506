//go:build e2e

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/cuts"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/workflows"
)

// A table that applied its part of a transaction before it joined a
// group (here: started without one, stopped, then started in the group)
// never reports those events to the group, and a quiet table has no
// batch after it joins to report anything else. A breaker's run
// (2026-12-07) saw such a table hold every cut of its group (the busy
// table frozen up to 2 minutes at each attempt, no cut in 58 minutes).
// Now every mirror commit records its positions fetched per partition
// and its newest transaction events (lakemirror.fetched-past,
// lakemirror.newest-tx), a table started again recovers them, and its
// frozen report carries them: the group's first cut is published, at the
// busy table's newest END, and holds both halves of transaction 100.
//
// Then the ledger is stopped for good and taken out with starter leave
// (refused while it runs): its tag consistent is removed, its cut-1 stays,
// and cut 2 is published in accounts alone.
func TestGroupCutQuietTableStartedAgain(t *testing.T) {
	s := startStack(t)
	ctx := context.Background()
	c := s.r.Client
	for _, topic := range []string{"srv.shop.accounts", "srv.shop.ledger", "srv.transaction"} {
		if err := s.r.Kafka.CreateTopic(ctx, topic, 1); err != nil {
			t.Fatal(err)
		}
	}
	produce := func(topic string, id int, value string) { produceKeyed(t, s, topic, id, value) }
	// change is a streamed change of transaction tx at lsn (its _seq (lsn,
	// lsn)), the transaction's order-th event of its table
	change := func(op, after string, lsn, tx, order int) string {
		return strings.TrimSuffix(pgTxChange(op, after, lsn, tx), "}") +
			fmt.Sprintf(`,"transaction":{"id":"%d:%d","total_order":%d,"data_collection_order":%d}}`, tx, lsn, order, order)
	}
	end := pgEnd
	produce("srv.shop.ledger", 1, change("c", `{"id":1,"amount":-5}`, 99, 100, 1))
	produce("srv.shop.accounts", 1, change("c", `{"id":1,"balance":5}`, 100, 100, 1))
	produce("srv.transaction", 100, end(100, 101, `{"data_collection":"shop.accounts","event_count":1},{"data_collection":"shop.ledger","event_count":1}`))

	// the ledger applies its half of transaction 100 without a group, and stops
	if out, errw, code := s.cli("start", "srv.shop.ledger", "--key", "id", "--max-wait", "500ms", "--schedules=false"); code != exitOK {
		t.Fatalf("start: exit %d\n%s\n%s", code, out, errw)
	}
	ledger := lake.TableName{Namespace: "shop", Name: "ledger"}
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(500 * time.Millisecond) {
		if m, err := s.r.Catalog.LoadTable(ctx, ledger.Mirror()); err == nil && m.Properties()[lakecat.PropNewestTx] != "" {
			if got, want := m.Properties()[lakecat.PropNewestTx], `{"0":{"id":"100","order":1,"seq":"00000000000000630000000000000063"}}`; got != want {
				t.Fatalf("ledger's newest transaction %s, want %s", got, want)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the ledger applied nothing within 2 minutes")
		}
	}
	if _, errw, code := s.cli("stop", "shop.ledger"); code != exitOK {
		t.Fatalf("stop: exit %d\n%s", code, errw)
	}
	if err := c.GetWorkflow(ctx, workflows.WorkflowID("shop.ledger"), "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}

	// both tables in group shop: only accounts has changes from now on
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
  - topic: srv.shop.ledger
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errw, code := s.cli("apply", "-f", file, "--yes"); code != exitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errw)
	}
	produce("srv.shop.accounts", 1, change("u", `{"id":1,"balance":8}`, 200, 200, 1))
	produce("srv.transaction", 200, end(200, 201, `{"data_collection":"shop.accounts","event_count":1}`))
	g := awaitGroupCut(t, s, "shop", 4*time.Minute, "a cut", func(g workflows.GroupCut) bool { return g.Published != nil })
	cols := map[string]string{"shop.accounts": "balance", "shop.ledger": "amount"}
	got := map[string]string{}
	for _, tg := range g.Published.Tagged {
		tn, err := lake.ParseTableName(tg.Table)
		if err != nil {
			t.Fatal(err)
		}
		got[tg.Table] = mirrorRows(t, s.r.Catalog, tn, tg.Mirror, "id", cols[tg.Table])
	}
	if g.Published.Number != 1 || g.Published.W != "00000000000000c90000000000000000" || got["shop.accounts"] != "1=8" || got["shop.ledger"] != "1=-5" {
		t.Fatalf("cut %d at W %s: %v; want cut 1 at (201, 0), accounts 1=8 and ledger 1=-5", g.Published.Number, g.Published.W, got)
	}
	t.Logf("cut 1 at W %s: %v (aborts %d, last %q)", g.Published.W, got, g.Aborts, g.LastAbort)

	// the ledger is stopped for good: leave refuses while it runs, then
	// takes it out; its tag consistent goes, cut-1 stays, and cut 2 is
	// published in accounts alone
	if _, errw, code := s.cli("leave", "shop.ledger"); code != exitUsage || !strings.Contains(errw, "shop.ledger runs: stop it first (starter stop shop.ledger)") {
		t.Fatalf("leave of a running table: exit %d\n%s", code, errw)
	}
	if _, errw, code := s.cli("stop", "shop.ledger"); code != exitOK {
		t.Fatalf("stop: exit %d\n%s", code, errw)
	}
	if err := c.GetWorkflow(ctx, workflows.WorkflowID("shop.ledger"), "").Get(ctx, nil); err != nil {
		t.Fatal(err)
	}
	out, errw, code := s.cli("leave", "shop.ledger")
	if want := "shop.ledger taken out of group shop\ntag consistent removed from shop.ledger, shop.ledger_history\nits tags cut-<n> up to cut-1 stay; the group's later cuts do not include it\n"; code != exitOK || out != want {
		t.Fatalf("leave: exit %d\n%s\n%s\nwant\n%s", code, out, errw, want)
	}
	m, err := s.r.Catalog.LoadTable(ctx, ledger.Mirror())
	if err != nil {
		t.Fatal(err)
	}
	if refs := cuts.Refs(m); len(refs) != 1 || refs["cut-1"] == 0 {
		t.Fatalf("the ledger's tags after leave: %v, want cut-1 only", refs)
	}
	produce("srv.shop.accounts", 1, change("u", `{"id":1,"balance":9}`, 300, 300, 1))
	produce("srv.transaction", 300, end(300, 301, `{"data_collection":"shop.accounts","event_count":1}`))
	g = awaitGroupCut(t, s, "shop", 4*time.Minute, "cut 2", func(g workflows.GroupCut) bool { return g.Published != nil && g.Published.Number == 2 })
	if len(g.Published.Tagged) != 1 || g.Published.Tagged[0].Table != "shop.accounts" || g.Published.W != "000000000000012d0000000000000000" {
		t.Fatalf("cut 2 at W %s in %+v; want (301, 0) in accounts alone", g.Published.W, g.Published.Tagged)
	}
	if rows := mirrorRows(t, s.r.Catalog, lake.TableName{Namespace: "shop", Name: "accounts"}, g.Published.Tagged[0].Mirror, "id", "balance"); rows != "1=9" {
		t.Fatalf("accounts at cut 2: %s", rows)
	}
}
