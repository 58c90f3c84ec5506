package activities

import (
	"context"
	"errors"
	"testing"

	"go.temporal.io/sdk/temporal"
)

// Claims and releases by the fair share ceil(running tables / workers):
// a worker at its share refuses (ClaimRefused) unless forced or it holds
// the table already; after a worker joins, the worker above its share
// releases exactly its excess, and a worker alone never releases; a table
// that stopped running no longer counts.
func TestClaimShare(t *testing.T) {
	ctx := context.Background()
	workers := 1
	running := map[string]bool{"a": true, "b": true, "c": true}
	a := &Activities{WorkerQueue: "lakemirror@w1", Fleet: func(context.Context, bool) (int, map[string]bool, error) { return workers, running, nil }}
	claim := func(table string, force bool) (ClaimResult, error) {
		return a.ClaimTable(ctx, ClaimRequest{Table: table, Force: force})
	}
	for i, table := range []string{"a", "b", "c"} {
		res, err := claim(table, false)
		if err != nil || res.Queue != "lakemirror@w1" || res.Tables != i+1 {
			t.Fatalf("claim %s alone: %+v, %v", table, res, err)
		}
	}
	if a.release(ctx, "a", 0) {
		t.Fatal("a worker alone released a table")
	}
	workers = 2 // share 2: one table too many
	if a.release(ctx, "a", 1) {
		t.Fatal("released a table with late keys pending")
	}
	if !a.release(ctx, "a", 0) || a.release(ctx, "b", 0) || Held(a) != 2 {
		t.Fatalf("releases with 2 workers: held %d, want exactly one released and 2 held", Held(a))
	}
	var ae *temporal.ApplicationError
	if _, err := claim("a", false); !errors.As(err, &ae) || ae.Type() != ErrTypeClaimRefused {
		t.Fatalf("claim at the share: %v, want ClaimRefused", err)
	}
	if res, err := claim("b", false); err != nil || res.Tables != 2 {
		t.Fatalf("claim of a held table: %+v, %v; want taken, 2 tables", res, err)
	}
	if res, err := claim("a", true); err != nil || res.Tables != 3 {
		t.Fatalf("forced claim: %+v, %v; want taken, 3 tables", res, err)
	}
	delete(running, "c") // c stopped: 2 running tables, share ceil(2/2) = 1, and c no longer counts
	if !a.release(ctx, "a", 0) || Held(a) != 1 {
		t.Fatalf("after c stopped: held %d, want a released and 1 held (b)", Held(a))
	}
}
