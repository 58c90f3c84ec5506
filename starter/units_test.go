package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/internal/pipelines"
	"github.com/lakemirror/lakemirror/workflows"
)

// status shows freshness past a day in days, hours and minutes (issue 35:
// "freshness 7763h13m26s" before).
func TestPrintStatusFreshnessInDays(t *testing.T) {
	now := time.Date(2026, 12, 5, 3, 0, 0, 0, time.UTC)
	src := now.Add(-(7763*time.Hour + 13*time.Minute + 26*time.Second))
	var b bytes.Buffer
	printStatusAt(&b, workflows.Status{Table: "shop.orders", NewestSourceTs: src.UnixMicro()}, now)
	var got string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "freshness") {
			got = strings.Join(strings.Fields(l), " ")
		}
	}
	if want := "freshness 323d11h13m (newest applied source commit 2026-01-15T15:46:34Z)"; got != want {
		t.Fatalf("freshness line %q, want %q\n%s", got, want, b.String())
	}
}

// The Web UI's static details of a table workflow name its topic,
// tables and key, and point at the current details.
func TestStaticDetails(t *testing.T) {
	spec := activities.TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"}, WithoutHistory: true}
	want := "Mirrors the Debezium change events of Kafka topic `shop.public.orders` into the Iceberg tables of `shop.orders` (bronze, mirror); primary key `order_id`.\n\n" +
		"Phase, offsets, lag, the last batches, the last error and the settings in effect are in **Current Details**; from a shell: `starter status shop.orders`."
	if got := staticDetails(spec); got != want {
		t.Fatalf("static details:\n%s\nwant:\n%s", got, want)
	}
}

// apply --output json prints the plan as one JSON object with exact
// field names (issue 35: apply had no --output json).
func TestApplyPlanJSON(t *testing.T) {
	plan := pipelines.Plan{Steps: []pipelines.Step{
		{Action: pipelines.ActionCreate, Table: "shop.orders", Topic: "shop.public.orders"},
		{Action: pipelines.ActionUpdate, Table: "shop.items", Topic: "shop.public.items", Changes: []pipelines.Change{{Field: "batch_size", Old: "5000", New: "200", Live: true}}},
		{Action: pipelines.ActionRefuse, Table: "shop.users", Topic: "shop.public.users", Changes: []pipelines.Change{{Field: "topic", Old: "a", New: "b"}}, Note: "the topic cannot change"},
	}, NotInFile: []string{"shop.old"}}
	var b bytes.Buffer
	if err := writeJSON(&b, planOutput(plan)); err != nil {
		t.Fatal(err)
	}
	want := `{
  "plan": [
    {
      "action": "create",
      "table": "shop.orders",
      "topic": "shop.public.orders"
    },
    {
      "action": "update",
      "table": "shop.items",
      "topic": "shop.public.items",
      "changes": [
        {
          "field": "batch_size",
          "old": "5000",
          "new": "200",
          "live": true
        }
      ]
    },
    {
      "action": "refuse",
      "table": "shop.users",
      "topic": "shop.public.users",
      "changes": [
        {
          "field": "topic",
          "old": "a",
          "new": "b",
          "live": false
        }
      ],
      "note": "the topic cannot change"
    }
  ],
  "not_in_file": [
    "shop.old"
  ],
  "refused": [
    "shop.users"
  ]
}
`
	if b.String() != want {
		t.Fatalf("apply JSON:\n%s\nwant:\n%s", b.String(), want)
	}
}

// apply --output json refuses to ask for a confirmation: it needs --yes
// or --dry-run (usage, exit 2), before reading the file.
func TestApplyJSONNeedsYes(t *testing.T) {
	code, out, errw := cli(t, "apply", "-f", "does-not-matter.yaml", "--output", "json")
	if code != exitUsage || !strings.Contains(errw, "--output json needs --yes or --dry-run") {
		t.Fatalf("exit %d\n%s%s", code, out, errw)
	}
}

// status counts with the noun that fits ("1 batch") and shows the values
// never known (issue 34: TOAST placeholders written as NULL) and the keys
// moved onto a live key (a key swap in one statement).
func TestPrintStatusCounts(t *testing.T) {
	var b bytes.Buffer
	printStatusAt(&b, workflows.Status{Table: "shop.orders", TotalLag: 1,
		Totals: workflows.Totals{Batches: 1, Records: 1, Changes: 2, Applied: 2, Tombstones: 1, RowsWritten: 1, BronzeRows: 1, UnknownValues: 1, KeysMovedOntoLive: 2}}, time.Now())
	var got []string
	for _, l := range strings.Split(b.String(), "\n") {
		for _, p := range []string{"lag", "totals", "values never known", "keys moved"} {
			if strings.HasPrefix(l, p) {
				got = append(got, strings.Join(strings.Fields(l), " "))
			}
		}
	}
	want := []string{
		"lag 1 record (as of the table's last plan)",
		"totals (since start) 1 batch, 1 record, 2 changes: 2 applied, 0 stale, 0 duplicate; 0 quarantined; 1 tombstone; 1 mirror row written, 1 bronze row",
		"values never known 1 value written as NULL (a TOAST or LOB value the source sent only as \"unchanged\" for a row the mirror did not hold: " +
			"a stream started without a source snapshot, or a primary-key change whose old row was not known; `starter resnapshot` reads them)",
		"keys moved onto a live key 2 (a primary-key change onto a key another row held: a key swap or shift in one statement of a deferrable primary key, " +
			"which Debezium's stream cannot place; a key may be deleted or hold another row's TOAST value: `starter resnapshot` reads them)",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got\n%s\nwant\n%s\n\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"), b.String())
	}
}
