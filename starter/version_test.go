package main

import (
	"runtime"
	"strings"
	"testing"

	"github.com/lakemirror/lakemirror/internal/buildinfo"
)

// --version prints the build: version, VCS revision when stamped, Go
// version (buildinfo), and exits 0.
func TestVersion(t *testing.T) {
	code, stdout, stderr := cli(t, "--version")
	want := "starter " + buildinfo.Get().String() + "\n"
	if code != exitOK || stdout != want || stderr != "" || !strings.Contains(stdout, runtime.Version()) {
		t.Fatalf("exit %d, stdout %q, stderr %q; want 0, %q", code, stdout, stderr, want)
	}
}
