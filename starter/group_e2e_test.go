//go:build e2e

package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakemirror/lakemirror/internal/cdc"
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
			if err := s.r.Kafka.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(`{"id":1}`), Value: []byte(v)}); err != nil {
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
	waitFor(t, 2*time.Minute, "the group's first read", func() bool { return query().Ends == 2 })
	g := query()
	want := workflows.GroupCut{Group: "shop", TransactionTopic: "srv.transaction", Number: 1, W: cdc.PostgresSeq(103, 0).Hex(), TxID: "102:103",
		SourceTsMs: 1767258000103, Tables: []string{"shop.accounts", "shop.audit", "shop.transfers"}, ReadOffsets: g.ReadOffsets,
		Reports: g.Reports, Ends: 2}
	if !reflect.DeepEqual(g, want) || g.Reports < 2 || g.ReadOffsets[0] != 2 {
		t.Fatalf("cut\n got  %+v\n want %+v (2 reports or more, read offset 2)", g, want)
	}
	out, _, code := s.cli("status", "shop.accounts")
	if code != exitOK || !strings.Contains(strings.Join(strings.Fields(out), " "), "group shop, transaction topic srv.transaction tables") {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
}
