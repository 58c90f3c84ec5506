//go:build e2e

package source

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lakemirror/lakemirror/internal/source/pgtest"
	"github.com/lakemirror/lakemirror/internal/testskip"
)

// server is the package's private PostgreSQL server (pgtest), shared by
// the tests; each test works in its own database (newDB).
var server *pgtest.Server

func TestMain(m *testing.M) {
	s, err := pgtest.Launch()
	if err != nil {
		// Never skip: the tests need a real server.
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	server = s
	code := testskip.Main(m, "internal/source") // a summary line of the MariaDB tests skipped (mysqltest)
	if err := s.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping PostgreSQL:", err)
	}
	os.Exit(code)
}

// testDB is a fresh database: a Postgres on it and a plain connection for
// setting up tables and writing concurrently.
type testDB struct {
	dsn  string
	src  *Postgres
	conn *pgx.Conn
}

func newDB(t *testing.T) *testDB {
	t.Helper()
	ctx := context.Background()
	dsn := server.CreateDatabase(t)
	src, err := Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(src.Close)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return &testDB{dsn: dsn, src: src, conn: conn}
}

// exec runs SQL statements (simple protocol: several per string).
func (d *testDB) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := d.conn.Exec(context.Background(), sql, args...); err != nil {
		t.Fatalf("%v\n%s", err, sql)
	}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return ctx
}
