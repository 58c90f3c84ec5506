package source

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// Definition errors are told from failures to talk to the database: a
// malformed DSN and PostgreSQL's authorization (28) and access-rule (42)
// classes are definitions; a refused connection, a connection exception
// (08), a serialization failure (40001) and a server shutting down (57P01)
// are to be retried.
func TestIsDefinition(t *testing.T) {
	wrap := func(code string) error {
		return fmt.Errorf("source: reading public.t: %w", &pgconn.PgError{Code: code})
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{definition("source: table %s does not exist", "public.t"), true},
		{fmt.Errorf("load: %w", definition("x")), true},
		{wrap("42P01"), true}, // undefined_table: dropped while loading
		{wrap("42501"), true}, // insufficient_privilege
		{wrap("28P01"), true}, // invalid_password
		{wrap("08006"), false},
		{wrap("40001"), false},
		{wrap("57P01"), false},
		{errors.New("connection reset by peer"), false},
		{nil, false},
	} {
		if got := IsDefinition(tc.err); got != tc.want {
			t.Errorf("IsDefinition(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
	if got := definition("source: x %d", 1).Error(); got != "source: x 1" {
		t.Errorf("message %q", got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := Open(ctx, "postgres://u@h:notaport/db"); !IsDefinition(err) {
		t.Errorf("a malformed DSN: %v, want a definition error", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0") // a port nobody serves once closed
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().(*net.TCPAddr)
	ln.Close()
	_, err = Open(ctx, fmt.Sprintf("postgres://u@127.0.0.1:%d/db?connect_timeout=2", addr.Port))
	if err == nil || IsDefinition(err) {
		t.Errorf("an unreachable database: %v, want a retryable error", err)
	}
}
