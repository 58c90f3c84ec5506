package main

import (
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/lake"
)

// The erasure's result for people: a line per table, the warnings, what
// it leaves to Kafka; no key.
func TestPrintErasure(t *testing.T) {
	var b strings.Builder
	printErasure(&b, "shop.customers", lake.EraseResult{ID: "lakemirror-erase-shop.customers-1", RequestedBy: "dpo", Keys: 2,
		Position: "0000000000000047",
		Tables: map[string]lake.EraseTableResult{
			"mirror": {Rows: 3, FilesRewritten: []string{"a", "b"}, FilesDeleted: []string{"a", "b", "c"}, SnapshotsExpired: []int64{1, 2, 3, 4}},
			"bronze": {Rows: 9, FilesRewritten: []string{"x"}, FilesDeleted: []string{"x"}, SnapshotsExpired: []int64{5}},
		},
		Warnings: []string{`[tag "t"] of shop.customers keeps snapshot 9, which reaches files holding a key: they were kept (--force)`}})
	want := `erased 2 keys of shop.customers (erasure lakemirror-erase-shop.customers-1, requested by dpo): changes of them at or below position 0000000000000047 are refused from now on
  bronze     9 rows, 1 file rewritten, 1 file deleted, 1 snapshot expired
  mirror     3 rows, 2 files rewritten, 3 files deleted, 4 snapshots expired
  warning: [tag "t"] of shop.customers keeps snapshot 9, which reaches files holding a key: they were kept (--force)
  Kafka still holds the keys' records until its retention deletes them; the audit is in the table's _erasures table
`
	if b.String() != want {
		t.Fatalf("got\n%s\nwant\n%s", b.String(), want)
	}
}
