// Package pgtest starts a private PostgreSQL server for tests: its own
// data directory (initdb) in a temporary directory, its own postmaster on
// a free port of 127.0.0.1, wal_level=logical, fsync off, a Unix socket in
// the temporary directory, and nothing shared with any system cluster.
//
// # Requirements
//
// The PostgreSQL server binaries initdb and postgres. They are looked up
// in $LAKEMIRROR_PG_BIN when set, else in the newest
// /usr/lib/postgresql/<major>/bin (where Debian's postgresql-<major>
// package puts them; the suite is written against 15, Debian bookworm's),
// else on $PATH. When they are missing, Start fails the test (it never
// skips) with the command that installs them:
//
//	apt-get install -y postgresql-15
//
// # Running as root
//
// initdb and postgres refuse to run as root. When the test process is
// root, both are started as the unprivileged user "postgres" (created by
// the Debian package; $LAKEMIRROR_PG_USER names another one): the child
// process gets that user's uid and gid, and no supplementary groups,
// through syscall.SysProcAttr.Credential, so no su, runuser or sudo is
// involved, and the server's directory is created by the test process and
// handed to that user with chown. When the test process is not root, the
// binaries simply run as its user. The server gets SIGQUIT (immediate
// shutdown) if the test process dies without stopping it.
package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// InstallHint is the command that installs the server binaries on Debian
// (bookworm): initdb and postgres in /usr/lib/postgresql/15/bin.
const InstallHint = "apt-get install -y postgresql-15"

// Server is a running private PostgreSQL server.
type Server struct {
	// DSN connects to the "postgres" database as the superuser
	// "postgres" over TCP (trust authentication, no TLS).
	DSN string
	// Port is the TCP port on 127.0.0.1.
	Port int
	// Dir holds data/ (the cluster), sock/ (the Unix socket) and
	// postgres.log. It is removed by Stop.
	Dir string
	// BinDir is where initdb and postgres were found.
	BinDir string

	cmd     *exec.Cmd
	exited  chan struct{} // closed when the postmaster has exited
	waitErr error
	logFile *os.File

	stopOnce sync.Once
	stopErr  error
	dbSeq    int
	mu       sync.Mutex
}

// Start starts a private server for t and stops it (and removes its
// files) in t.Cleanup. It calls t.Fatal when the server cannot be
// started, naming InstallHint when the binaries are missing.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := Launch()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("pgtest: stopping PostgreSQL: %v", err)
		}
	})
	return s
}

// Launch starts a private server that is not tied to a test (for
// TestMain); the caller must call Stop. The error names InstallHint when
// the binaries are missing.
func Launch() (*Server, error) {
	bin, err := FindBin()
	if err != nil {
		return nil, err
	}
	cred, err := runAs()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "lakemirror-pgtest-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, BinDir: bin}
	if err := s.setup(cred); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// A free port can be taken by someone else between our probe and the
	// postmaster's bind: try a few.
	for attempt := 0; ; attempt++ {
		err = s.start(cred)
		if err == nil {
			return s, nil
		}
		if attempt == 4 || !strings.Contains(s.logTail(), "could not bind") {
			os.RemoveAll(dir)
			return nil, err
		}
	}
}

// FindBin returns the directory holding initdb and postgres (see the
// package doc for the search order).
func FindBin() (string, error) {
	return findBin(os.Getenv("LAKEMIRROR_PG_BIN"), "/usr/lib/postgresql/*/bin")
}

// findBin searches envDir (when set), then the directories matching
// libGlob, newest major first, then $PATH.
func findBin(envDir, libGlob string) (string, error) {
	has := func(dir string) bool {
		for _, b := range []string{"initdb", "postgres"} {
			if st, err := os.Stat(filepath.Join(dir, b)); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
				return false
			}
		}
		return true
	}
	if envDir != "" {
		if has(envDir) {
			return envDir, nil
		}
		return "", fmt.Errorf("pgtest: LAKEMIRROR_PG_BIN=%s does not hold the PostgreSQL server binaries initdb and postgres; "+
			"unset it to use /usr/lib/postgresql/<major>/bin, installed with: %s", envDir, InstallHint)
	}
	dirs, _ := filepath.Glob(libGlob)
	sort.Slice(dirs, func(i, j int) bool { return majorOf(dirs[i]) > majorOf(dirs[j]) })
	for _, d := range dirs {
		if has(d) {
			return d, nil
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		if real, err := filepath.EvalSymlinks(p); err == nil && has(filepath.Dir(real)) {
			return filepath.Dir(real), nil
		}
		if has(filepath.Dir(p)) {
			return filepath.Dir(p), nil
		}
	}
	return "", fmt.Errorf("pgtest: the PostgreSQL server binaries (initdb, postgres) are not installed: "+
		"not in $LAKEMIRROR_PG_BIN, /usr/lib/postgresql/<major>/bin or $PATH; install them with: %s", InstallHint)
}

// majorOf reads the major version from /usr/lib/postgresql/<major>/bin.
func majorOf(binDir string) float64 {
	f, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return f
}

// runAs returns the credential the server runs under: nil when the test
// process is not root, else the unprivileged user's.
func runAs() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	name := os.Getenv("LAKEMIRROR_PG_USER")
	if name == "" {
		name = "postgres"
	}
	u, err := user.Lookup(name)
	if err != nil {
		return nil, fmt.Errorf("pgtest: running as root, and PostgreSQL refuses to run as root; "+
			"the unprivileged user %q to run it as does not exist (%v); %s creates \"postgres\"", name, err, InstallHint)
	}
	uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
	gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
	if err1 != nil || err2 != nil || uid == 0 {
		return nil, fmt.Errorf("pgtest: user %q (uid %s, gid %s) cannot run PostgreSQL", name, u.Uid, u.Gid)
	}
	return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), Groups: []uint32{}}, nil
}

// setup creates the directories (owned by the server's user) and runs
// initdb.
func (s *Server) setup(cred *syscall.Credential) error {
	for _, d := range []string{s.Dir, filepath.Join(s.Dir, "sock")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
		if cred != nil {
			if err := os.Chown(d, int(cred.Uid), int(cred.Gid)); err != nil {
				return fmt.Errorf("pgtest: chown %s: %w", d, err)
			}
		}
	}
	cmd := s.command(cred, "initdb",
		"-D", filepath.Join(s.Dir, "data"),
		"-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C",
		"-N") // --no-sync: a test cluster needs no durability
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("pgtest: initdb failed: %v\n%s", err, out)
	}
	return nil
}

// command builds a server binary's command, run as cred (nil: as the
// test process), in the server's directory, with a fixed C locale.
func (s *Server) command(cred *syscall.Credential, name string, args ...string) *exec.Cmd {
	cmd := exec.Command(filepath.Join(s.BinDir, name), args...)
	cmd.Dir = s.Dir
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LANG=C", "LC_ALL=C", "TZ=UTC", "HOME=" + s.Dir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT}
	return cmd
}

// start picks a free port, starts the postmaster and waits until it
// accepts connections.
func (s *Server) start(cred *syscall.Credential) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	s.Port = port
	s.DSN = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	logFile, err := os.OpenFile(filepath.Join(s.Dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	settings := []string{
		"listen_addresses=127.0.0.1",
		"port=" + strconv.Itoa(port),
		"unix_socket_directories=" + filepath.Join(s.Dir, "sock"),
		"wal_level=logical",
		"max_wal_senders=4",
		"max_replication_slots=4",
		"fsync=off",
		"full_page_writes=off",
		"shared_buffers=16MB",
		"max_connections=50",
		"timezone=UTC",
		"log_timezone=UTC",
	}
	args := []string{"-D", filepath.Join(s.Dir, "data")}
	for _, kv := range settings {
		args = append(args, "-c", kv)
	}
	cmd := s.command(cred, "postgres", args...)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return fmt.Errorf("pgtest: starting postgres: %w", err)
	}
	s.cmd, s.logFile, s.exited = cmd, logFile, make(chan struct{})
	go func() {
		s.waitErr = cmd.Wait()
		logFile.Close()
		close(s.exited)
	}()

	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("pgtest: postgres exited during startup (%v):\n%s", s.waitErr, s.logTail())
		default:
		}
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, s.DSN)
		if err == nil {
			err = conn.Ping(ctx)
			conn.Close(ctx)
		}
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			s.kill()
			return fmt.Errorf("pgtest: postgres did not accept connections within 60s (%v):\n%s", err, s.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// logTail returns the last lines of the server log.
func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "postgres.log"))
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

// kill stops the postmaster immediately and waits for it.
func (s *Server) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-s.exited:
		case <-time.After(10 * time.Second):
			_ = s.cmd.Process.Kill()
			<-s.exited
		}
	}
}

// Stop shuts the server down (fast shutdown: open sessions are ended)
// and removes its directory. It is safe to call more than once.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil {
			_ = s.cmd.Process.Signal(syscall.SIGINT)
			select {
			case <-s.exited:
			case <-time.After(30 * time.Second):
				s.stopErr = errors.New("postgres did not stop within 30s after SIGINT; sent SIGQUIT")
				s.kill()
			}
		}
		if err := os.RemoveAll(s.Dir); err != nil && s.stopErr == nil {
			s.stopErr = err
		}
	})
	return s.stopErr
}

// DatabaseDSN returns the DSN of database name on this server.
func (s *Server) DatabaseDSN(name string) string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/%s?sslmode=disable", s.Port, name)
}

// CreateDatabase creates a fresh, empty database named after t and
// returns its DSN. Tests sharing one server (see Launch) use it to stay
// independent of each other.
func (s *Server) CreateDatabase(t testing.TB) string {
	t.Helper()
	s.mu.Lock()
	s.dbSeq++
	n := s.dbSeq
	s.mu.Unlock()
	var b strings.Builder
	for _, r := range strings.ToLower(t.Name()) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	name := b.String()
	if len(name) > 40 {
		name = name[:40]
	}
	name = fmt.Sprintf("t%d_%s", n, name)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.DSN)
	if err != nil {
		t.Fatalf("pgtest: connecting: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		t.Fatalf("pgtest: CREATE DATABASE %s: %v", name, err)
	}
	return s.DatabaseDSN(name)
}
