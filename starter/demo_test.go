//go:build !nodev

package main

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
)

var ingestedAt = regexp.MustCompile(`,"_ingested_at":"[^"]*"`)

// runDemo runs `starter demo` in-process and returns the mirror it prints,
// without the _ingested_at column (wall-clock time of the run).
func runDemo(t *testing.T, args ...string) string {
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
	return ingestedAt.ReplaceAllString(out.String(), "")
}

// The bundled sample stream (no flags) ends equal to the generator's
// expected state; demo returns an error otherwise.
func TestDemoSampleStream(t *testing.T) {
	got := runDemo(t, "--batch-size", "9")
	if n := strings.Count(got, "\n"); n != 43 {
		t.Fatalf("%d mirror rows, want 43", n)
	}
}
