package lake

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// OpenStateDir removes the state directories of dead processes of this
// host (and of the older name form, which has no host) and leaves alone
// those of live processes and of other hosts sharing the volume: a pid
// says nothing about another container. (A breaker's finding.)
func TestOpenStateDirKeepsOtherHosts(t *testing.T) {
	base := t.TempDir()
	host := stateDirHost()
	const dead = 1 << 30      // no process has this pid
	names := map[string]bool{ // name -> kept
		fmt.Sprintf("worker-%d@%s-111", dead, host):         false,
		fmt.Sprintf("worker-%d@other-host-7-222", dead):     true,
		fmt.Sprintf("worker-%d-333", dead):                  false,
		fmt.Sprintf("worker-%d@%s-444", os.Getppid(), host): true,
		"not-a-worker": true,
	}
	for n := range names {
		if err := os.Mkdir(filepath.Join(base, n), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	dir, cleanup, err := OpenStateDir(base)
	if err != nil {
		t.Fatal(err)
	}
	defer cleanup()
	if _, h, ok := parseStateDir(filepath.Base(dir)); !ok || h != host {
		t.Fatalf("own directory %s: host %q ok %v, want %q", dir, h, ok, host)
	}
	var want, got []string
	for n, kept := range names {
		if kept {
			want = append(want, n)
		}
	}
	want = append(want, filepath.Base(dir))
	entries, err := os.ReadDir(base)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		got = append(got, e.Name())
	}
	slices.Sort(want)
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("left %v, want %v", got, want)
	}
	if pid, h, ok := parseStateDir("worker-12@a-b-c-999"); !ok || pid != 12 || h != "a-b-c" {
		t.Fatalf("parse worker-12@a-b-c-999: %d %q %v", pid, h, ok)
	}
}
