package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/activities"
	"github.com/lakemirror/lakemirror/workflows"
)

// status shows the table's local state on its worker from the last batch:
// the key index's keys, RAM and disk, the chain log, the worker's budget;
// no line before a batch reported one.
func TestPrintStatusLocalState(t *testing.T) {
	st := workflows.Status{Table: "shop.orders", LastBatch: &activities.ApplyResult{BatchID: "b7", State: &activities.StateUsage{
		IndexKeys: 30_000_000, IndexSpilled: true, IndexRAMBytes: 48 << 20, IndexDiskBytes: 900 << 20, LogBytes: 8 << 30,
		WorkerIndexRAMBytes: 300 << 20, WorkerBudgetBytes: 3 << 30, TableBudgetBytes: 768 << 20, CacheBytes: 384 << 20}}}
	var b bytes.Buffer
	printStatus(&b, st)
	var got []string
	for _, l := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(l, "local state") {
			got = append(got, strings.Join(strings.Fields(l), " "))
		}
	}
	want := "local state key index of 30000000 keys spilled to disk: 48.0 MiB in RAM, 900.0 MiB on disk; chain log 8192.0 MiB on disk; worker's index budget 3072.0 MiB (768.0 MiB a table), its indexes 300.0 MiB in RAM"
	if len(got) != 1 || got[0] != want {
		t.Fatalf("status lines %q, want one: %q", got, want)
	}
	st.LastBatch.State = nil
	b.Reset()
	printStatus(&b, st)
	if strings.Contains(b.String(), "local state") {
		t.Fatalf("a local state line without a reported state:\n%s", b.String())
	}
}
