//go:build e2e

package pgtest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestStart starts a server, checks the settings the loader relies on,
// and that Stop removes its directory.
func TestStart(t *testing.T) {
	s := Start(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, s.CreateDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for setting, want := range map[string]string{"wal_level": "logical", "fsync": "off", "server_encoding": "UTF8", "TimeZone": "UTC"} {
		var got string
		if err := conn.QueryRow(ctx, "SELECT current_setting($1)", setting).Scan(&got); err != nil {
			t.Fatal(err)
		}
		if got != want {
			t.Errorf("%s = %q, want %q", setting, got, want)
		}
	}
	var user string
	if err := conn.QueryRow(ctx, "SELECT current_user").Scan(&user); err != nil || user != "postgres" {
		t.Fatalf("current_user = %q, %v", user, err)
	}
	conn.Close(ctx)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Errorf("Stop left %s behind (%v)", s.Dir, err)
	}
}

// fatalRecorder is a testing.TB whose Fatal records the message and ends
// the goroutine, as the real one does.
type fatalRecorder struct {
	testing.TB
	msg string
}

func (f *fatalRecorder) Fatal(args ...any) {
	f.msg = fmt.Sprint(args...)
	runtime.Goexit()
}

func (f *fatalRecorder) Helper() {}

// TestMissingBinaries: without the server binaries the helper fails (never
// skips) with the command that installs them.
func TestMissingBinaries(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	if _, err := findBin("", filepath.Join(t.TempDir(), "nothing", "*", "bin")); err == nil || !strings.Contains(err.Error(), "apt-get install -y postgresql-15") {
		t.Errorf("findBin without binaries: %v", err)
	}
	t.Setenv("LAKEMIRROR_PG_BIN", t.TempDir())
	rec := &fatalRecorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Start(rec)
		t.Error("Start returned without binaries")
	}()
	<-done
	if !strings.Contains(rec.msg, InstallHint) {
		t.Errorf("Start failed with %q, want the install command", rec.msg)
	}
}
