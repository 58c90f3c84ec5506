package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/cdc"
	"github.com/lakemirror/lakemirror/internal/payload"
	"github.com/lakemirror/lakemirror/workflows"
)

// status of a grouped table shows its group's cut after the group line:
// the published cut, its source commit time and how far it trails now, a
// pending cut and since when, the last cut given up and the holds; a
// group whose workflow does not run says so. JSON: group_cut.
func TestStatusGroupCut(t *testing.T) {
	now := time.Date(2026, 12, 6, 15, 0, 0, 0, time.UTC)
	st := workflows.Status{Table: "shop.accounts", Topic: "srv.shop.accounts",
		Spec: payload.TableSpec{Table: "shop.accounts", Group: "shop", TransactionTopic: "srv.transaction"}}
	g := workflows.GroupCut{Group: "shop", TransactionTopic: "srv.transaction", Number: 3, W: cdc.PostgresSeq(111, 0).Hex(),
		Published: &workflows.PublishedCut{Number: 2, W: cdc.PostgresSeq(111, 0).Hex(), TxID: "110:111",
			SourceTsMs: now.Add(-90*time.Second - 250*time.Millisecond).UnixMilli(), PublishedAt: now.Add(-time.Minute)},
		Pending:   &workflows.PendingCut{Attempt: 5, Number: 3, W: cdc.PostgresSeq(120, 0).Hex(), Since: now.Add(-12 * time.Second)},
		Aborts:    1,
		LastAbort: "cut attempt 4: table shop.audit stopped waiting for the bound (its freeze timed out) and went on",
		Holds: []workflows.GroupHold{{Table: "shop.audit", Collection: "public.audit", TxID: "119:120", Commit: cdc.PostgresSeq(120, 0).Hex(), Missing: 2},
			{Table: "shop.transfers", Collection: "public.transfers", TxID: "119:120", Commit: cdc.PostgresSeq(120, 0).Hex()}},
	}
	lines := func(gc *groupCutStatus) string {
		var b bytes.Buffer
		printStatusGroupAt(&b, st, gc, now)
		ls := strings.Split(b.String(), "\n")[2:] // from the group line to the tables line
		for i, l := range ls {
			if strings.HasPrefix(l, "tables ") {
				ls = ls[:i]
				break
			}
		}
		return strings.Join(ls, "\n")
	}
	want := `group                 shop, transaction topic srv.transaction
group cut             cut 2 (tag cut-2) at commit at lsn 0/6F (_seq 000000000000006f0000000000000000), source commit 2026-12-06T14:58:29.75Z, 1m30s behind; published 2026-12-06T14:59:00Z
cut pending           cut 3 (attempt 5), bound at commit at lsn 0/78 (_seq 00000000000000780000000000000000), since 2026-12-06T14:59:48Z (12s)
last cut given up     cut attempt 4: table shop.audit stopped waiting for the bound (its freeze timed out) and went on (1 cut given up)
cut held by           shop.audit misses 2 events of transaction 119:120; shop.transfers has not fetched past transaction 119:120`
	if got := lines(groupCutView(g, now)); got != want {
		t.Fatalf("status lines:\n%s\nwant:\n%s", got, want)
	}
	g2 := workflows.GroupCut{Group: "shop", Pending: &workflows.PendingCut{Attempt: 1, Number: 1, Since: now.Add(-3 * time.Second)}}
	want = `group                 shop, transaction topic srv.transaction
group cut             none published yet
cut pending           cut 1 (attempt 1), freezing the tables, since 2026-12-06T14:59:57Z (3s)`
	if got := lines(groupCutView(g2, now)); got != want {
		t.Fatalf("status lines:\n%s\nwant:\n%s", got, want)
	}
	stopped := &groupCutStatus{Group: "shop", Note: "the group's workflow lakemirror-group-shop does not run: no cut is taken (starting or applying a table of the group starts it)"}
	want = `group                 shop, transaction topic srv.transaction
group cut             the group's workflow lakemirror-group-shop does not run: no cut is taken (starting or applying a table of the group starts it)`
	if got := lines(stopped); got != want {
		t.Fatalf("status lines:\n%s\nwant:\n%s", got, want)
	}

	var b bytes.Buffer
	if err := writeJSON(&b, statusWithCut{Status: st, GroupCut: groupCutView(g, now)}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	i := strings.Index(out, `  "group_cut": {`)
	if i < 0 || !strings.HasPrefix(out, "{\n  \"table\": \"shop.accounts\",") {
		t.Fatalf("status JSON without group_cut or table:\n%s", out)
	}
	wantJSON := `  "group_cut": {
    "group": "shop",
    "running": true,
    "number": 2,
    "w": "000000000000006f0000000000000000",
    "tx_id": "110:111",
    "source_ts": "2026-12-06T14:58:29.75Z",
    "lag_seconds": 90.25,
    "published_at": "2026-12-06T14:59:00Z",
    "pending": {
      "attempt": 5,
      "number": 3,
      "w": "00000000000000780000000000000000",
      "since": "2026-12-06T14:59:48Z"
    },
    "aborts": 1,
    "last_abort": "cut attempt 4: table shop.audit stopped waiting for the bound (its freeze timed out) and went on",
    "holds": [
      {
        "table": "shop.audit",
        "collection": "public.audit",
        "tx_id": "119:120",
        "commit": "00000000000000780000000000000000",
        "missing": 2
      },
      {
        "table": "shop.transfers",
        "collection": "public.transfers",
        "tx_id": "119:120",
        "commit": "00000000000000780000000000000000"
      }
    ]
  }
}
`
	if out[i:] != wantJSON {
		t.Fatalf("status JSON group_cut:\n%s\nwant:\n%s", out[i:], wantJSON)
	}
	b.Reset()
	if err := writeJSON(&b, statusWithCut{Status: workflows.Status{Table: "shop.orders"}}); err != nil || strings.Contains(b.String(), "group_cut") {
		t.Fatalf("an ungrouped table's JSON has group_cut (%v):\n%s", err, b.String())
	}
}

// A group without a transaction topic: status says its published cut is
// per position, W as a change's position, and what the pending cut
// waits for.
func TestStatusGroupCutPerPosition(t *testing.T) {
	now := time.Date(2026, 12, 6, 15, 0, 0, 0, time.UTC)
	st := workflows.Status{Table: "shop.accounts", Topic: "srv.shop.accounts", Spec: payload.TableSpec{Table: "shop.accounts", Group: "shop"}}
	w := cdc.PostgresSeq(100, 111).Hex()
	g := workflows.GroupCut{Group: "shop", PerPosition: true,
		Published: &workflows.PublishedCut{Number: 2, W: w, SourceTsMs: now.Add(-90 * time.Second).UnixMilli(), PublishedAt: now.Add(-time.Minute), PerPosition: true},
		Pending:   &workflows.PendingCut{Attempt: 3, Number: 3, W: cdc.PostgresSeq(120, 130).Hex(), Since: now.Add(-12 * time.Second), PerPosition: true},
		Waiting:   []string{"shop.audit partition 1 at " + w},
		Holds:     []workflows.GroupHold{{Table: "shop.audit", Collection: "public.audit"}},
	}
	var b bytes.Buffer
	printStatusGroupAt(&b, st, groupCutView(g, now), now)
	ls := strings.Split(b.String(), "\n")[2:]
	for i, l := range ls {
		if strings.HasPrefix(l, "tables ") {
			ls = ls[:i]
			break
		}
	}
	want := `group                 shop, no transaction topic (cuts per position)
group cut             cut 2 (tag cut-2) per position, not per transaction (a transaction may straddle W), at ` + positionText(w) + `, source commit 2026-12-06T14:58:30Z, 1m30s behind; published 2026-12-06T14:59:00Z
cut pending           cut 3 (attempt 3), bound at ` + cutPositionText(cdc.PostgresSeq(120, 130).Hex()) + `, since 2026-12-06T14:59:48Z (12s)
cut waits for         shop.audit partition 1 at ` + w + `
cut held by           shop.audit (the lowest position fetched)`
	if got := strings.Join(ls, "\n"); got != want {
		t.Fatalf("status lines:\n%s\nwant:\n%s", got, want)
	}
	var j bytes.Buffer
	if err := writeJSON(&j, groupCutView(g, now)); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(j.String(), `"per_position": true`) || !strings.Contains(j.String(), `"waiting": [`) {
		t.Fatalf("status JSON without per_position or waiting:\n%s", j.String())
	}
}
