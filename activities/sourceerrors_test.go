//go:build e2e

package activities

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"

	"go.temporal.io/sdk/temporal"

	"github.com/lakemirror/lakemirror/internal/source/pgtest"
)

// A direct load whose source database cannot be reached fails retryably
// (the table retries, then blocks: a database restart must not need an
// operator), while a source table that cannot be read as asked (missing)
// blocks at once with BadSpec.
func TestLoadSourceErrorsRetryOrBlock(t *testing.T) {
	ctx := context.Background()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	pg := pgtest.Start(t)
	a := New(mustCatalog(t), nil)
	a.StateDir = t.TempDir()
	a.Sources = map[string]string{
		"down": fmt.Sprintf("postgres://u@127.0.0.1:%d/db?connect_timeout=2", port),
		"up":   pg.CreateDatabase(t),
	}
	load := func(src string) error {
		spec := TableSpec{Table: "shop.accounts", Topic: "shop.public.accounts", KeyColumns: []string{"id"},
			Source: src, SourceTable: "public.accounts"}.Defaults()
		_, err := a.LoadTable(ctx, LoadRequest{Spec: spec, LoadID: InitialLoadID})
		return err
	}
	var ae *temporal.ApplicationError
	if err := load("down"); err == nil || (errors.As(err, &ae) && ae.NonRetryable()) {
		t.Fatalf("an unreachable source: %v, want a retryable error", err)
	}
	err = load("up")
	if !errors.As(err, &ae) || !ae.NonRetryable() || ae.Type() != ErrTypeBadSpec {
		t.Fatalf("a missing source table: %v, want a non-retryable %s", err, ErrTypeBadSpec)
	}
	if want := "source: table public.accounts does not exist"; ae.Message() != want {
		t.Fatalf("message %q, want %q", ae.Message(), want)
	}
}
