//go:build e2e

// Package docs holds the project's documentation; its test runs the
// tutorial (tutorial.md) as written.
package docs

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// step is one fenced block of the tutorial.
type step struct {
	line   int      // of the opening fence, for messages
	info   string   // the fence's info string: "sh", "sh second-terminal", "text"
	lines  []string // the block's lines
	expect []string // for a sh block: the lines of the "text" block after it
}

// parseTutorial returns the tutorial's sh blocks, each with the lines of
// the text block that follows it (before the next sh block), if any.
func parseTutorial(md string) ([]step, error) {
	var steps []step
	var cur *step
	sc := bufio.NewScanner(strings.NewReader(md))
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if cur != nil {
			if l == "```" {
				switch {
				case strings.HasPrefix(cur.info, "sh"):
					steps = append(steps, *cur)
				case cur.info == "text" && len(steps) > 0:
					last := &steps[len(steps)-1]
					if last.expect != nil {
						return nil, fmt.Errorf("line %d: a second text block after the sh block of line %d", cur.line, last.line)
					}
					last.expect = cur.lines
				}
				cur = nil
				continue
			}
			cur.lines = append(cur.lines, l)
			continue
		}
		if info, ok := strings.CutPrefix(l, "```"); ok {
			cur = &step{line: n, info: info, lines: []string{}}
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("line %d: block not closed", cur.line)
	}
	return steps, sc.Err()
}

// commands splits a sh block into commands: lines joined where they end
// in a backslash; blank lines and comments dropped.
func commands(lines []string) []string {
	var cmds []string
	var cur string
	for _, l := range lines {
		if strings.HasSuffix(l, "\\") {
			cur += strings.TrimSuffix(l, "\\") + " "
			continue
		}
		cur += l
		if t := strings.TrimSpace(cur); t != "" && !strings.HasPrefix(t, "#") {
			cmds = append(cmds, t)
		}
		cur = ""
	}
	return cmds
}

// freePort returns a TCP port of 127.0.0.1 that is free now, whose port
// +1000 is free too (the dev worker's Web UI).
func freePort(t *testing.T) int {
	t.Helper()
	for range 50 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := ln.Addr().(*net.TCPAddr).Port
		ln.Close()
		if port+1000 > 65535 {
			continue
		}
		ui, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port+1000))
		if err != nil {
			continue
		}
		ui.Close()
		return port
	}
	t.Fatal("no free port pair")
	return 0
}

// lockedBuffer is a bytes.Buffer safe for a process's writes and the
// test's reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// shell is one bash session that runs commands in order, like a
// terminal: exports and the working directory carry over.
type shell struct {
	cmd   *exec.Cmd
	stdin *bufio.Writer
	out   *bufio.Reader
	seq   int
}

func newShell(t *testing.T, dir string, env []string) *shell {
	t.Helper()
	cmd := exec.Command("bash", "--noprofile", "--norc")
	cmd.Dir, cmd.Env = dir, env
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pw.Close()
	s := &shell{cmd: cmd, stdin: bufio.NewWriter(in), out: bufio.NewReader(pr)}
	t.Cleanup(func() {
		in.Close()
		_ = cmd.Wait()
		pr.Close()
	})
	return s
}

// run runs one command line (stdin from /dev/null, stderr with stdout)
// and returns its output and exit code.
func (s *shell) run(line string) (string, int, error) {
	s.seq++
	marker := fmt.Sprintf("__tutorial_end_%d__", s.seq)
	fmt.Fprintf(s.stdin, "{ %s\n} </dev/null 2>&1\nprintf '\\n%s %%d\\n' $?\n", line, marker)
	if err := s.stdin.Flush(); err != nil {
		return "", -1, err
	}
	var out strings.Builder
	for {
		l, err := s.out.ReadString('\n')
		if err != nil {
			return out.String(), -1, fmt.Errorf("bash ended: %w (output so far: %s)", err, out.String())
		}
		if rest, ok := strings.CutPrefix(l, marker+" "); ok {
			code, _ := strconv.Atoi(strings.TrimSpace(rest))
			return strings.TrimRight(out.String(), "\n"), code, nil
		}
		out.WriteString(l)
	}
}

// checkExpected reports the expected lines that are not lines of out: a
// line must equal an output line (trailing spaces aside), or, ending in
// "…", start one.
func checkExpected(out string, expect []string) []string {
	var got []string
	for _, l := range strings.Split(out, "\n") {
		got = append(got, strings.TrimRight(l, " "))
	}
	var missing []string
	for _, want := range expect {
		want = strings.TrimRight(want, " ")
		if want == "" {
			continue
		}
		prefix, isPrefix := strings.CutSuffix(want, "…")
		found := false
		for _, g := range got {
			if g == want || (isPrefix && strings.HasPrefix(g, strings.TrimRight(prefix, " "))) {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, want)
		}
	}
	return missing
}

// spaces collapses runs of spaces (the columns of status) for comparing.
var spaces = regexp.MustCompile(` {2,}`)

// TestTutorial runs docs/tutorial.md as written: the "sh" blocks in
// order in one bash session in the repository root (every command must
// exit 0), the "sh second-terminal" block (the dev worker) in the
// background until the end, and checks that every line of the "text"
// block after a sh block is a line of that block's output (exact, the
// columns' widths aside; a line ending in "…" is a line's start). Only
// the environment differs from a reader's: the dev worker gets free ports
// (-dev-temporal-port, -dev-kafka-port), a metrics port of its own and a
// temporary data directory (LAKEMIRROR_DATA_DIR), the commands the
// matching TEMPORAL_ADDRESS, KAFKA_BROKERS and LAKEMIRROR_DATA_DIR, and
// the Web UI's address 127.0.0.1:8233 in a command is replaced by the
// worker's. At the end the dev worker is stopped with SIGINT: it must
// exit 0 having logged no ERROR line and an INFO "batch applied" line
// for each table, and its worker id must be the one in its data dir.
func TestTutorial(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the starter and the dev worker and runs the tutorial on the dev stack")
	}
	md, err := os.ReadFile("tutorial.md")
	if err != nil {
		t.Fatal(err)
	}
	steps, err := parseTutorial(string(md))
	if err != nil {
		t.Fatal(err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dataDir := t.TempDir()
	temporalPort, kafkaPort := freePort(t), freePort(t)
	uiAddr := fmt.Sprintf("127.0.0.1:%d", temporalPort+1000)
	var base []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "TEMPORAL_ADDRESS", "TEMPORAL_NAMESPACE", "KAFKA_BROKERS", "CATALOG_TYPE", "CATALOG_URI", "WAREHOUSE", "CATALOG_PROPS",
			"LAKEMIRROR_DATA_DIR", "LAKEMIRROR_WORKER_ID", "METRICS_ADDR", "TEMPORAL_API_KEY", "SCHEMA_REGISTRY_URL":
			continue
		}
		base = append(base, kv)
	}
	base = append(base, "LAKEMIRROR_DATA_DIR="+dataDir)
	shellEnv := append(append([]string(nil), base...),
		fmt.Sprintf("TEMPORAL_ADDRESS=127.0.0.1:%d", temporalPort), fmt.Sprintf("KAFKA_BROKERS=127.0.0.1:%d", kafkaPort))
	sh := newShell(t, root, shellEnv)

	var worker *exec.Cmd
	var workerLog lockedBuffer
	workerDone := make(chan error, 1)
	stopWorker := func() error {
		if worker == nil {
			return nil
		}
		_ = worker.Process.Signal(syscall.SIGINT)
		select {
		case err := <-workerDone:
			worker = nil
			return err
		case <-time.After(2 * time.Minute):
			_ = worker.Process.Kill()
			worker = nil
			return fmt.Errorf("the dev worker did not stop within 2 minutes of SIGINT")
		}
	}
	t.Cleanup(func() { _ = stopWorker() })

	ran := 0
	for _, s := range steps {
		if s.info == "sh second-terminal" {
			cmds := commands(s.lines)
			if len(cmds) != 1 || worker != nil {
				t.Fatalf("tutorial.md:%d: want one second-terminal command (the dev worker), got %q", s.line, cmds)
			}
			line := fmt.Sprintf("%s -dev-temporal-port %d -dev-kafka-port %d -metrics-addr 127.0.0.1:0", cmds[0], temporalPort, kafkaPort)
			worker = exec.Command("bash", "-c", "exec "+line)
			worker.Dir, worker.Env = root, base
			worker.Stdout, worker.Stderr = &workerLog, &workerLog
			if err := worker.Start(); err != nil {
				t.Fatal(err)
			}
			go func(c *exec.Cmd) { workerDone <- c.Wait() }(worker)
			deadline := time.Now().Add(5 * time.Minute)
			for !strings.Contains(workerLog.String(), `msg="worker running"`) {
				select {
				case err := <-workerDone:
					worker = nil
					t.Fatalf("tutorial.md:%d: the dev worker exited (%v):\n%s", s.line, err, workerLog.String())
				case <-time.After(200 * time.Millisecond):
				}
				if time.Now().After(deadline) {
					t.Fatalf("tutorial.md:%d: the dev worker is not running after 5 minutes:\n%s", s.line, workerLog.String())
				}
			}
			ran++
			continue
		}
		if s.info != "sh" {
			continue
		}
		var all []string
		for _, c := range commands(s.lines) {
			line := strings.ReplaceAll(c, "127.0.0.1:8233", uiAddr)
			out, code, err := sh.run(line)
			if err != nil {
				t.Fatalf("tutorial.md:%d: %s: %v", s.line, c, err)
			}
			t.Logf("tutorial.md:%d: $ %s\n%s", s.line, c, out)
			if code != 0 {
				t.Fatalf("tutorial.md:%d: %s: exit code %d\n%s\ndev worker's log:\n%s", s.line, c, code, out, workerLog.String())
			}
			all = append(all, out)
			ran++
		}
		var expect []string
		for _, l := range s.expect {
			expect = append(expect, spaces.ReplaceAllString(l, " "))
		}
		if missing := checkExpected(spaces.ReplaceAllString(strings.Join(all, "\n"), " "), expect); len(missing) > 0 {
			t.Errorf("tutorial.md:%d: lines shown under it that the output lacks:\n%s\noutput:\n%s", s.line, strings.Join(missing, "\n"), strings.Join(all, "\n"))
		}
	}
	if ran < 20 {
		t.Fatalf("ran %d commands of the tutorial; it has more: the parser missed blocks", ran)
	}
	if worker == nil {
		t.Fatal("the tutorial starts no dev worker (a sh second-terminal block)")
	}
	if err := stopWorker(); err != nil {
		t.Fatalf("the dev worker's exit: %v\n%s", err, workerLog.String())
	}
	log := workerLog.String()
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "level=ERROR") {
			t.Errorf("the dev worker logged an ERROR: %s", l)
		}
	}
	for _, table := range []string{"shop.orders", "tutorial.mysql_products", "tutorial.pg_products"} {
		if !regexp.MustCompile(`level=INFO msg="batch applied" table=` + regexp.QuoteMeta(table) + ` batch=\S+ records=\d+ changes=\d+ duration=\S+ lag=\d+ `).MatchString(log) {
			t.Errorf("the dev worker logged no INFO batch line of %s", table)
		}
	}
	// drop --drop-tables left no directory of the dropped tables: only the
	// namespaces' directories remain in the warehouse
	wh := filepath.Join(dataDir, "warehouse")
	err = filepath.WalkDir(wh, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if rel, _ := filepath.Rel(wh, path); rel != "." && strings.Count(rel, string(filepath.Separator)) > 0 {
			t.Errorf("left in the warehouse after the tutorial's drops: %s", rel)
		}
		return nil
	})
	if err != nil {
		t.Error(err)
	}
	id, err := os.ReadFile(filepath.Join(dataDir, "worker-id"))
	if err != nil || !strings.Contains(log, "worker_id="+strings.TrimSpace(string(id))) {
		t.Errorf("worker id in the data dir %q (%v); the worker's log does not name it", id, err)
	}
}
