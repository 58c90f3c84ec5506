//go:build e2e

package activities

import (
	"context"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/sample"
)

// A worker that releases its idle table's local state before random
// batches (ReleaseIdleStates) ends with the same mirror and history as
// one that never does, and the history is the clean pass's. With
// sidecars on, each release writes the sidecar and the next batch loads
// it: the state is built once (the first batch), and the late keys are
// woven in their batches as on the steady worker (the loaded log holds
// every past change: no RebuildKeys). With sidecars off, each release
// makes the next batch build the state from the tables.
func TestIdleStateReleaseAppliesAlike(t *testing.T) {
	for seed := int64(1); seed <= 4; seed++ {
		s := sample.Generate(sample.Options{Seed: seed, Inserts: 25, Updates: 70, Deletes: 10, Duplicates: 8, Late: 14,
			OutOfOrder: 8, UnseenDeletes: 2, Tombstones: true, ReplicaIdentityFull: seed%2 == 0})
		sizes := sizesFor(rand.New(rand.NewPCG(uint64(seed), 1)), len(s.Delivered))
		name := lake.TableName{Namespace: "shop", Name: "orders"}
		spec := TableSpec{Table: "shop.orders", Topic: "shop.public.orders", KeyColumns: []string{"order_id"}, MaxQuarantine: 1000}.Defaults()
		steady := mustCatalog(t)
		if late := applyStream(t, steady, s.Delivered, sizes, func(int) bool { return false }); late.rebuilds != 0 {
			t.Fatalf("seed %d: the steady worker ran %d rebuilds", seed, late.rebuilds)
		}
		mirrorCols := []string{"order_id", "status", "amount", lake.ColSeq, lake.ColDeleted}
		histCols := []string{"order_id", lake.ColSeq, lake.ColValidToSeq, lakecat.ColRowHash, lake.ColIsCurrent}
		wantMirror, wantHistory := tableText(t, steady, name, false, mirrorCols...), tableText(t, steady, name, true, histCols...)
		if want := cleanPass(t, s); wantHistory != want {
			t.Fatalf("seed %d: steady history is not the clean pass's\ngot:\n%s\nwant:\n%s", seed, wantHistory, want)
		}
		for _, sidecars := range []bool{true, false} {
			cat := mustCatalog(t)
			a := New(cat, nil)
			a.StateDir = t.TempDir()
			if sidecars {
				a.SidecarEvery = 1_000_000 // written only at a release
			}
			r := rand.New(rand.NewPCG(uint64(seed), 2))
			releases := 0
			late := applyBatches(t, &a, spec, s.Delivered, sizes, func(i int) *Activities {
				if i > 0 && r.IntN(3) == 0 {
					n, err := ReleaseIdleStates(context.Background(), a, time.Hour, time.Now().Add(2*time.Hour))
					if err != nil || n != 1 {
						t.Fatalf("seed %d, before batch %d: released %d, %v; want 1", seed, i+1, n, err)
					}
					releases++
				}
				return nil
			})
			if releases == 0 || StateReleases(a) != int64(releases) {
				t.Fatalf("seed %d: %d releases, StateReleases %d", seed, releases, StateReleases(a))
			}
			wantBuilds, wantRebuilds := int64(1), 0
			if !sidecars {
				wantBuilds = int64(1 + releases)
			}
			if b := StateBuilds(a); b != wantBuilds {
				t.Fatalf("seed %d, sidecars %v: %d state builds after %d releases, want %d", seed, sidecars, b, releases, wantBuilds)
			}
			if sidecars && late.rebuilds != wantRebuilds {
				t.Fatalf("seed %d: %d RebuildKeys runs after releases with sidecars, want %d", seed, late.rebuilds, wantRebuilds)
			}
			if got := tableText(t, cat, name, false, mirrorCols...); got != wantMirror {
				t.Fatalf("seed %d, sidecars %v: mirrors differ\nsteady:\n%s\nreleased:\n%s", seed, sidecars, wantMirror, got)
			}
			if got := tableText(t, cat, name, true, histCols...); got != wantHistory {
				t.Fatalf("seed %d, sidecars %v: histories differ\nsteady:\n%s\nreleased:\n%s", seed, sidecars, wantHistory, got)
			}
		}
	}
}
