// Package mysqltest starts a private MariaDB server for tests: its own
// data directory (mariadb-install-db) in a temporary directory, its own
// mariadbd on a free port of 127.0.0.1 and a Unix socket in that
// directory, binary logging on (ROW format, as Debezium needs), and
// nothing shared with any system server. The superuser root has no
// password (TCP from 127.0.0.1).
//
// # Requirements
//
// mariadbd and mariadb-install-db, from Debian's mariadb-server package:
// looked up in $LAKEMIRROR_MARIADB_BIN when set, else /usr/sbin and
// /usr/bin, else $PATH. Missing binaries are reported with InstallHint;
// tests skip then (Skip, through testskip: the package's TestMain
// summarises the skips) while CI installs the package (.ci/run).
//
// # Running as root
//
// mariadbd refuses to run as root without being told a user: when the
// test process is root the server gets --user=mysql (the package's user;
// $LAKEMIRROR_MARIADB_USER names another), and its directory is handed
// to that user with chown. The server gets SIGKILL if the test process
// dies without stopping it.
package mysqltest

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"

	"github.com/lakemirror/lakemirror/internal/testskip"
)

// InstallHint is the command that installs the server on Debian.
const InstallHint = "apt-get install -y mariadb-server"

// ErrNotInstalled is returned (wrapped) by Launch when the binaries are
// missing.
var ErrNotInstalled = errors.New("mysqltest: the MariaDB server binaries (mariadbd, mariadb-install-db) are not installed; install them with: " + InstallHint)

// Server is a running private MariaDB server.
type Server struct {
	Port int    // TCP port on 127.0.0.1
	Dir  string // data/, binlog/, the socket and mariadb.log; removed by Stop

	cmd      *exec.Cmd
	exited   chan struct{}
	waitErr  error
	stopOnce sync.Once
	stopErr  error
	mu       sync.Mutex
	dbSeq    int
}

// Start starts a private server for t and stops it in t.Cleanup. It
// skips t (naming InstallHint) when the binaries are missing, and fails
// it when the server cannot be started.
func Start(t testing.TB) *Server {
	t.Helper()
	s, err := Launch()
	if errors.Is(err, ErrNotInstalled) {
		testskip.Skip(t, err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Stop(); err != nil {
			t.Errorf("mysqltest: stopping MariaDB: %v", err)
		}
	})
	return s
}

// findBin returns the paths of mariadbd and mariadb-install-db.
func findBin() (server, install string, err error) {
	dirs := []string{"/usr/sbin", "/usr/bin"}
	if d := os.Getenv("LAKEMIRROR_MARIADB_BIN"); d != "" {
		dirs = []string{d}
	}
	find := func(names ...string) string {
		for _, n := range names {
			for _, d := range dirs {
				p := filepath.Join(d, n)
				if st, err := os.Stat(p); err == nil && !st.IsDir() && st.Mode()&0o111 != 0 {
					return p
				}
			}
			if p, err := exec.LookPath(n); err == nil {
				return p
			}
		}
		return ""
	}
	server, install = find("mariadbd", "mysqld"), find("mariadb-install-db", "mysql_install_db")
	if server == "" || install == "" {
		return "", "", ErrNotInstalled
	}
	return server, install, nil
}

// Launch starts a private server not tied to a test; the caller must
// call Stop. The error wraps ErrNotInstalled when the binaries are
// missing.
func Launch() (*Server, error) {
	server, install, err := findBin()
	if err != nil {
		return nil, err
	}
	runAs := ""
	var uid, gid int = -1, -1
	if os.Geteuid() == 0 {
		runAs = os.Getenv("LAKEMIRROR_MARIADB_USER")
		if runAs == "" {
			runAs = "mysql"
		}
		u, err := user.Lookup(runAs)
		if err != nil {
			return nil, fmt.Errorf("mysqltest: running as root, and the user %q to run MariaDB as does not exist (%v); %s creates \"mysql\"", runAs, err, InstallHint)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
	}
	dir, err := os.MkdirTemp("", "lakemirror-mysqltest-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir}
	fail := func(err error) (*Server, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	for _, d := range []string{dir, filepath.Join(dir, "data"), filepath.Join(dir, "binlog")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return fail(err)
		}
		if uid >= 0 {
			if err := os.Chown(d, uid, gid); err != nil {
				return fail(fmt.Errorf("mysqltest: chown %s: %w", d, err))
			}
		}
	}
	args := []string{"--no-defaults", "--datadir=" + filepath.Join(dir, "data"), "--auth-root-authentication-method=normal", "--skip-test-db"}
	if runAs != "" {
		args = append(args, "--user="+runAs)
	}
	if out, err := exec.Command(install, args...).CombinedOutput(); err != nil {
		return fail(fmt.Errorf("mysqltest: %s failed: %v\n%s", filepath.Base(install), err, out))
	}
	for attempt := 0; ; attempt++ {
		err = s.start(server, runAs)
		if err == nil {
			return s, nil
		}
		if attempt == 4 || !strings.Contains(s.logTail(), "Address already in use") {
			return fail(err)
		}
	}
}

// start picks a free port, starts mariadbd and waits until it accepts
// connections.
func (s *Server) start(server, runAs string) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	s.Port = l.Addr().(*net.TCPAddr).Port
	l.Close()
	args := []string{"--no-defaults",
		"--datadir=" + filepath.Join(s.Dir, "data"),
		"--socket=" + filepath.Join(s.Dir, "mariadb.sock"),
		"--pid-file=" + filepath.Join(s.Dir, "mariadb.pid"),
		"--log-error=" + filepath.Join(s.Dir, "mariadb.log"),
		"--port=" + strconv.Itoa(s.Port), "--bind-address=127.0.0.1", "--skip-name-resolve",
		"--log-bin=" + filepath.Join(s.Dir, "binlog", "mysql-bin"), "--binlog-format=ROW", "--server-id=1",
		"--innodb-buffer-pool-size=16M", "--innodb-flush-log-at-trx-commit=0", "--sync-binlog=0",
		"--default-time-zone=+00:00", "--character-set-server=utf8mb4", "--collation-server=utf8mb4_bin",
	}
	if runAs != "" {
		args = append(args, "--user="+runAs)
	}
	cmd := exec.Command(server, args...)
	cmd.Dir = s.Dir
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/bin", "LANG=C", "TZ=UTC", "HOME=" + s.Dir}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("mysqltest: starting mariadbd: %w", err)
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	go func() {
		s.waitErr = cmd.Wait()
		close(s.exited)
	}()
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("mysqltest: mariadbd exited during startup (%v):\n%s", s.waitErr, s.logTail())
		default:
		}
		db, err := sql.Open("mysql", s.DSN(""))
		if err == nil {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			err = db.PingContext(ctx)
			cancel()
			db.Close()
		}
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			s.kill()
			return fmt.Errorf("mysqltest: mariadbd did not accept connections within 60s (%v):\n%s", err, s.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// DSN is the go-sql-driver DSN of database name ("" none) as root.
func (s *Server) DSN(name string) string {
	cfg := mysql.NewConfig()
	cfg.User, cfg.Net, cfg.Addr, cfg.DBName = "root", "tcp", fmt.Sprintf("127.0.0.1:%d", s.Port), name
	cfg.MultiStatements = true
	return cfg.FormatDSN()
}

// CreateDatabase creates a fresh database named after t and returns its
// DSN.
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
	db, err := sql.Open("mysql", s.DSN(""))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE DATABASE `" + name + "`"); err != nil {
		t.Fatalf("mysqltest: CREATE DATABASE %s: %v", name, err)
	}
	return s.DSN(name)
}

func (s *Server) logTail() string {
	b, _ := os.ReadFile(filepath.Join(s.Dir, "mariadb.log"))
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	if len(lines) > 30 {
		lines = lines[len(lines)-30:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

func (s *Server) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// Stop shuts the server down (SIGTERM, SIGKILL after 30 s) and removes
// its directory. It is safe to call more than once.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil {
			_ = s.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-s.exited:
			case <-time.After(30 * time.Second):
				s.stopErr = errors.New("mariadbd did not stop within 30s after SIGTERM; killed")
				s.kill()
			}
		}
		if err := os.RemoveAll(s.Dir); err != nil && s.stopErr == nil {
			s.stopErr = err
		}
	})
	return s.stopErr
}
