//go:build e2e

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"go.temporal.io/sdk/converter"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/cuts"
	"github.com/lakemirror/lakemirror/internal/sample"
	"github.com/lakemirror/lakemirror/workflows"
)

// A source group without a transaction topic on the embedded stack cuts
// per position: apply starts accounts (changes at LSN 100 and 102) and
// transfers (101) in group pos; once both reported, the group freezes
// them and bounds them at the highest watermark, accounts' change at 102.
// transfers has no change above it yet: it holds the cut (waiting names
// its partition) until a change at 105 arrives, which its bounded batch
// stops before; then the cut is published: cut-1 and consistent at the
// snapshots recorded, `_cuts` rows per position, the group's memo, cut
// and status saying per position, and the tags still reading the values
// at W after both tables moved on.
func TestGroupPerPositionOnTheStack(t *testing.T) {
	s := startStack(t)
	ctx := context.Background()
	c := s.r.Client
	produce := func(topic string, create bool, values ...string) {
		if create {
			if err := s.r.Kafka.CreateTopic(ctx, topic, 1); err != nil {
				t.Fatal(err)
			}
		}
		for _, v := range values {
			if err := s.r.Kafka.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte(`{"id":1}`), Value: []byte(sourceOfTopic(topic, v))}); err != nil {
				t.Fatal(err)
			}
		}
	}
	produce("pos.shop.accounts", true, string(sample.PostgresChange("c", "null", `{"id":1,"balance":10}`, 100).Value),
		string(sample.PostgresChange("u", "null", `{"id":1,"balance":5}`, 102).Value))
	produce("pos.shop.transfers", true, string(sample.PostgresChange("c", "null", `{"id":1,"amount":5}`, 101).Value))
	file := filepath.Join(t.TempDir(), "pipelines.yaml")
	if err := os.WriteFile(file, []byte(`defaults:
  key: id
  max_wait: 500ms
  group: pos
  maintenance: {compact_every: "off", expire_every: "off", purge_every: "off"}
groups:
  pos:
    cut_every: 1m
pipelines:
  - topic: pos.shop.accounts
  - topic: pos.shop.transfers
`), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, errw, code := s.cli("apply", "-f", file, "--yes"); code != exitOK {
		t.Fatalf("apply: exit %d\n%s\n%s", code, out, errw)
	}
	query := func() workflows.GroupCut {
		v, err := c.QueryWorkflow(ctx, workflows.GroupWorkflowID("pos"), "", workflows.QueryCut)
		if err != nil {
			t.Fatal(err)
		}
		var g workflows.GroupCut
		if err := v.Get(&g); err != nil {
			t.Fatal(err)
		}
		return g
	}
	w := cdc.PostgresSeq(102, 102).Hex() // accounts' watermark: the highest
	var g workflows.GroupCut
	waitFor(t, 2*time.Minute, "the cut bound at accounts' watermark", func() bool {
		g = query()
		return g.Pending != nil && g.Pending.W != ""
	})
	if p := g.Pending; p.W != w || !p.PerPosition || p.Number != 1 || p.SourceTsMs != 1767258000102 ||
		!reflect.DeepEqual(p.Frozen, map[string]string{"shop.accounts": w, "shop.transfers": cdc.PostgresSeq(101, 101).Hex()}) {
		t.Fatalf("pending cut %+v, want bound at %s per position, source time 1767258000102", p, w)
	}
	// transfers has fetched nothing past W: it holds the cut
	time.Sleep(6 * time.Second) // a held poll or more
	if g = query(); g.Published != nil || !reflect.DeepEqual(g.Waiting, []string{"shop.transfers partition 0 at " + cdc.PostgresSeq(101, 101).Hex()}) {
		t.Fatalf("before transfers moves: published %+v, waiting %q", g.Published, g.Waiting)
	}
	produce("pos.shop.transfers", false, string(sample.PostgresChange("u", "null", `{"id":1,"amount":9}`, 105).Value))
	waitFor(t, time.Minute, "the cut published", func() bool { g = query(); return g.Published != nil })
	p := g.Published
	if p.Number != 1 || p.W != w || p.TxID != "" || p.SourceTsMs != 1767258000102 || !p.PerPosition || len(p.Tagged) != 2 || g.Aborts != 0 {
		t.Fatalf("published cut %+v (aborts %d, %q), want cut 1 at %s per position", p, g.Aborts, g.LastAbort, w)
	}
	cat := s.r.Catalog
	for _, tg := range p.Tagged {
		name, err := lake.ParseTableName(tg.Table)
		if err != nil {
			t.Fatal(err)
		}
		for ident, id := range map[string]int64{"": tg.Mirror, "_history": tg.History} {
			tbl, err := lake.LoadTable(ctx, cat, name.Ident(ident))
			if err != nil {
				t.Fatal(err)
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
	rows, err := cuts.Read(ctx, cat, first, "pos")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, r := range rows {
		lines = append(lines, fmt.Sprintf("%d %s %q %d %s %v", r.Number, r.W, r.TxID, r.SourceTsMs, r.Table, r.PerPosition))
	}
	wantLines := []string{`1 ` + w + ` "" 1767258000102 shop.accounts true`, `1 ` + w + ` "" 1767258000102 shop.transfers true`}
	if !reflect.DeepEqual(lines, wantLines) {
		t.Errorf("_cuts rows %q, want %q", lines, wantLines)
	}
	// the memo the Web UI shows (upserted at the group's next poll)
	var memo workflows.GroupMemo
	waitFor(t, 10*time.Second, "the memo with the published cut", func() bool {
		desc, err := c.DescribeWorkflowExecution(ctx, workflows.GroupWorkflowID("pos"), "")
		if err != nil {
			t.Fatal(err)
		}
		memo = workflows.GroupMemo{}
		if err := converter.GetDefaultDataConverter().FromPayload(desc.GetWorkflowExecutionInfo().GetMemo().GetFields()[workflows.MemoCut], &memo); err != nil {
			t.Fatal(err)
		}
		return memo.Published != nil
	})
	if m := memo.Published; !memo.PerPosition || m == nil || m.Number != 1 || m.W != w || !m.PerPosition || m.SourceTs == nil || m.SourceTs.UnixMilli() != 1767258000102 ||
		!m.PublishedAt.Equal(p.PublishedAt) || m.HeldMs != p.HeldMs || m.HeldMs <= 6000 {
		t.Errorf("memo %+v (published %+v), want cut 1 at %s per position, held over 6 s", memo, memo.Published, w)
	}
	// both tables move on: the tags read the values at W
	value := func(name lake.TableName, col string, snapshot int64) string {
		return mirrorRows(t, cat, name, snapshot, "id", col)
	}
	produce("pos.shop.accounts", false, string(sample.PostgresChange("u", "null", `{"id":1,"balance":7}`, 110).Value))
	transfers, _ := lake.ParseTableName("shop.transfers")
	waitFor(t, time.Minute, "both tables past the cut", func() bool {
		return value(first, "balance", 0) == "1=7" && value(transfers, "amount", 0) == "1=9"
	})
	if got := value(first, "balance", p.Tagged[0].Mirror); got != "1=5" {
		t.Errorf("accounts at cut-1: %s, want 1=5 (the balance at W)", got)
	}
	if got := value(transfers, "amount", p.Tagged[1].Mirror); got != "1=5" {
		t.Errorf("transfers at cut-1: %s, want 1=5 (the amount at W)", got)
	}
	fields := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	out, errw, code := s.cli("cut", "pos")
	if text := fields(out); code != exitOK || !strings.Contains(text, "group pos cut 1 (tag cut-1) consistent per position, not per transaction (no transaction topic): a transaction may straddle W W "+positionText(w)+
		" source commit time 2026-01-01T09:00:00.102Z (the newest change the tables had applied when they froze)") {
		t.Errorf("cut pos: exit %d\n%s\n%s", code, out, errw)
	}
	out, errw, code = s.cli("cut", "pos", "--output", "json")
	var v cutView
	if err := json.Unmarshal([]byte(out), &v); code != exitOK || err != nil || !v.PerPosition || v.Cut != 1 || v.W != w {
		t.Errorf("cut --output json: exit %d, %v, %+v\n%s", code, err, v, errw)
	}
	out, errw, code = s.cli("status", "shop.accounts")
	if text := fields(out); code != exitOK || !strings.Contains(text, "group pos, no transaction topic (cuts per position) group cut cut 1 (tag cut-1) per position, not per transaction (a transaction may straddle W), at "+positionText(w)+", source commit 2026-01-01T09:00:00.102Z, ") {
		t.Errorf("status: exit %d\n%s\n%s", code, out, errw)
	}
}
