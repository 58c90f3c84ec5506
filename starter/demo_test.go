//go:build !nodev

package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/lake"
)

var ingestedAt = regexp.MustCompile(`,"_ingested_at":"[^"]*"`)

// runDemoLog runs `starter demo` in-process and returns the mirror it
// prints, without the _ingested_at column (wall-clock time of the run),
// and the demo's log (its stderr).
func runDemoLog(t *testing.T, args ...string) (string, string) {
	t.Helper()
	a := &app{}
	var out, log bytes.Buffer
	f := demoFlags{partitions: 1, timeout: 2 * time.Minute, seed: 1}
	f.spec.settings.MaxEvents, f.spec.settings.MaxWait, f.spec.settings.StartFrom, f.spec.settings.MaxQuarantine = 100, 100*time.Millisecond, "earliest", 100
	for i := 0; i < len(args); i += 2 {
		switch args[i] {
		case "--events":
			f.events = append(f.events, args[i+1])
		case "--key":
			f.spec.key = args[i+1]
		case "--batch-size":
			var n int
			for _, c := range args[i+1] {
				n = n*10 + int(c-'0')
			}
			f.spec.settings.MaxEvents = n
		}
	}
	if err := a.demo(context.Background(), &out, &log, f); err != nil {
		t.Fatalf("demo %v: %v\n%s", args, err, log.String())
	}
	return ingestedAt.ReplaceAllString(out.String(), ""), log.String()
}

// The bundled sample stream (no flags) ends equal to the generator's
// expected state; demo returns an error otherwise. Before the mirror, whose
// first rows by key are deletes of keys the stream never created (all null
// but their key), the log says so and shows the first live rows.
func TestDemoSampleStream(t *testing.T) {
	got, log := runDemoLog(t, "--batch-size", "9")
	if n := strings.Count(got, "\n"); n != 43 {
		t.Fatalf("%d mirror rows, want 43", n)
	}
	_, summary, _ := strings.Cut(log, "demo: mirror shop.orders:")
	summary, _, _ = strings.Cut(summary, "demo: the mirror equals")
	summary = ingestedAt.ReplaceAllString("demo: mirror shop.orders:"+summary, "")
	want := `demo: mirror shop.orders: 43 rows sorted by order_id: 30 live, 13 soft-deleted (_is_deleted true)
demo: 3 of the soft-deleted rows hold only their key, the other columns null: deletes of keys the stream never created (order_id=189, order_id=336, order_id=638)
demo: the first 3 of 30 live rows:
  {"order_id":1001,"customer":"Michael Stonebraker","status":"delivered","amount":"1128.16","note":null,"updated_at":"2026-01-15T09:00:00.140511Z","_seq":"0000000001003d900000000001003d90","_is_deleted":false,"_source_ts":"2026-01-15T09:00:00.141436Z"}
  {"order_id":1004,"customer":"Alan Turing","status":"cancelled","amount":"136.17","note":"second attempt","updated_at":"2026-01-15T09:00:00.135016Z","_seq":"00000000010038500000000001003850","_is_deleted":false,"_source_ts":"2026-01-15T09:00:00.135198Z"}
  {"order_id":1005,"customer":"Edsger Dijkstra","status":"delivered","amount":"2483.07","note":"call before delivery","updated_at":"2026-01-15T09:00:00.189916Z","_seq":"0000000001005f000000000001005f00","_is_deleted":false,"_source_ts":"2026-01-15T09:00:00.190444Z"}
`
	if summary != want {
		t.Errorf("the demo's summary of the mirror:\n%s\nwant:\n%s\nlog:\n%s", summary, want, log)
	}
}

// The summary's cases the sample stream does not have: no key-only
// deletes, fewer live rows than the sample, more key-only deletes than it
// lists, a key of two columns.
func TestWriteDemoSummary(t *testing.T) {
	cols := []string{"region", "id", "v", "_is_deleted"}
	keys, src := []string{"region", "id"}, []string{"region", "id", "v"}
	row := func(region string, id int, v any, del bool) lake.Row {
		return lake.Row{"region": region, "id": id, "v": v, "_is_deleted": del}
	}
	for _, c := range []struct {
		rows []lake.Row
		want string
	}{
		{[]lake.Row{row("eu", 1, "a", false), row("eu", 2, "b", true)},
			"demo: mirror demo.t: 2 rows sorted by region,id: 1 live, 1 soft-deleted (_is_deleted true)\n" +
				"demo: the 1 live row:\n" +
				`  {"region":"eu","id":1,"v":"a","_is_deleted":false}` + "\n"},
		{[]lake.Row{row("eu", 1, nil, true), row("eu", 2, nil, true), row("us", 3, nil, true), row("us", 4, nil, true)},
			"demo: mirror demo.t: 4 rows sorted by region,id: 0 live, 4 soft-deleted (_is_deleted true)\n" +
				"demo: 4 of the soft-deleted rows hold only their key, the other columns null: deletes of keys the stream never created (region=eu,id=1, region=eu,id=2, region=us,id=3, …)\n"},
	} {
		var b strings.Builder
		if err := writeDemoSummary(&b, "demo.t", c.rows, cols, keys, src, "_is_deleted"); err != nil {
			t.Fatal(err)
		}
		if b.String() != c.want {
			t.Errorf("summary:\n%s\nwant:\n%s", b.String(), c.want)
		}
	}
}
