// Package testskip makes skipped tests visible without `go test -v`: a
// test that skips for something missing on the machine (a Debian package
// such as mariadb-server or prometheus, an emulator's environment
// variable) calls Skip instead of t.Skip, and the package's TestMain
// calls Main, which prints one summary line of the skipped tests and
// their reasons at the end of the package's run.
//
// `go test ./...` shows a passing package's output only with -v, so the
// line goes to three places: stderr (seen with -v, and when the package
// fails), the terminal the tests run in (/dev/tty, when there is one: the
// line shows among go test's "ok" lines), and, when the environment
// variable LAKEMIRROR_SKIP_REPORT names a file, appended to that file
// (.ci/run prints it after the tests). docs/testing.md lists the Debian
// packages to install so that nothing skips.
package testskip

import (
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

// EnvReport names the file Main appends its summary line to.
const EnvReport = "LAKEMIRROR_SKIP_REPORT"

var (
	mu      sync.Mutex
	skipped = map[string]string{} // test name → reason
)

// Skip records t's reason for the package's summary and skips t
// (t.Skip(reason)).
func Skip(t testing.TB, reason string) {
	t.Helper()
	mu.Lock()
	skipped[t.Name()] = reason
	mu.Unlock()
	t.Skip(reason)
}

// Main runs the package's tests (m.Run), writes the summary of the tests
// that called Skip (Summary) to stderr, /dev/tty when it can be opened,
// and the file named by LAKEMIRROR_SKIP_REPORT when set, and returns
// m.Run's exit code, for os.Exit. pkg names the package in the line.
func Main(m *testing.M, pkg string) int {
	code := m.Run()
	line := Summary(pkg)
	if line == "" {
		return code
	}
	fmt.Fprintln(os.Stderr, line)
	if tty, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
		fmt.Fprintln(tty, line)
		tty.Close()
	}
	if path := os.Getenv(EnvReport); path != "" {
		if f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644); err == nil {
			_, _ = io.WriteString(f, line+"\n")
			f.Close()
		} else {
			fmt.Fprintf(os.Stderr, "testskip: %s: %v\n", EnvReport, err)
		}
	}
	return code
}

// Summary is the one-line summary of the tests skipped through Skip so
// far: "SKIP <pkg>: N test(s) skipped: TestA: reason; TestB: reason"
// (tests sorted by name; "" when none skipped).
func Summary(pkg string) string {
	mu.Lock()
	defer mu.Unlock()
	if len(skipped) == 0 {
		return ""
	}
	names := make([]string, 0, len(skipped))
	for n := range skipped {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + ": " + strings.Join(strings.Fields(skipped[n]), " ")
	}
	word := "tests"
	if len(names) == 1 {
		word = "test"
	}
	return fmt.Sprintf("SKIP %s: %d %s skipped: %s", pkg, len(names), word, strings.Join(parts, "; "))
}
