package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The ratios pair each lakemirror system with the peers doing the same
// work, keep lakemirror vs the mirror-only peers apart, and a run whose
// history is wrong gets no numbers.
func TestReportLikeForLike(t *testing.T) {
	dir := t.TempDir()
	runs := map[string]string{
		"lakemirror-r1.json":        `{"system":"lakemirror","batch":10,"phase2_s":2,"phase2_cpu_s":1,"events_delivered":1000,"check":{"correct":true},"history_check":{"correct":true,"versions":9,"open":5,"expected_versions":9,"complete":true}}`,
		"spark-full-r1.json":        `{"system":"spark-full","batch":10,"phase2_s":40,"phase2_cpu_s":20,"events_delivered":1000,"check":{"correct":true},"history_check":{"correct":true,"versions":8,"open":5,"expected_versions":9,"complete":false}}`,
		"lakemirror-mirror-r1.json": `{"system":"lakemirror-mirror","batch":10,"phase2_s":1,"phase2_cpu_s":0.5,"events_delivered":1000,"check":{"correct":true}}`,
		"duckdb-iceberg-r1.json":    `{"system":"duckdb-iceberg","batch":10,"phase2_s":4,"phase2_cpu_s":2,"phase2_rest_server_cpu_s":1,"events_delivered":1000,"check":{"correct":true}}`,
		"spark-mor-r1.json":         `{"system":"spark-mor","batch":10,"phase2_s":30,"phase2_cpu_s":10,"events_delivered":1000,"check":{"correct":false,"got":{},"expected":{}}}`,
	}
	for name, body := range runs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := reportCmd([]string{dir}, &out); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	for _, want := range []string{
		"Like for like, bronze + mirror + SCD2 history: lakemirror vs",
		"- spark-full: lakemirror gets 20x the events per CPU-second (1,000 vs 50; 1.0 vs 20.0 CPU-s); wall time: 20x faster (2.0 vs 40.0 s)",
		"Like for like, the mirror only: lakemirror-mirror vs",
		"- duckdb-iceberg: lakemirror-mirror gets 4.0x the events per CPU-second (2,000 vs 500; 0.5 vs 2.0 CPU-s)",
		"- spark-mor: no correct run, no ratio",
		"Not like for like, lakemirror (bronze + mirror + history) vs the mirror-only peers",
		"- duckdb-iceberg: lakemirror gets 2.0x the events per CPU-second",
		"the Iceberg REST catalog server (a JVM) used 1.0 of its 2 phase-2 CPU-s",
		"spark-full round 1: history 8 versions (5 open; an in-order history of the workload has 9), open versions as expected",
		"| spark-mor | mirror | 1 | **not correct: no numbers** |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	if strings.Index(s, "| lakemirror | ") > strings.Index(s, "| spark-full | ") {
		t.Errorf("lakemirror should come first:\n%s", s)
	}
}
