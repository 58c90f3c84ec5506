package main

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestRemoveEmptyLocalDirs: the empty directories of a purged table's
// location go, deepest first, with the location itself; a directory that
// still holds a file stays with it; object-store locations are left alone.
func TestRemoveEmptyLocalDirs(t *testing.T) {
	wh := t.TempDir()
	tbl := filepath.Join(wh, "shop.db", "orders")
	for _, d := range []string{"data/day=2026-12-05", "metadata"} {
		if err := os.MkdirAll(filepath.Join(tbl, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	removed, err := removeEmptyLocalDirs("file://" + tbl)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{filepath.Join(tbl, "metadata"), filepath.Join(tbl, "data", "day=2026-12-05"), filepath.Join(tbl, "data"), tbl}
	if !slices.Equal(removed, want) {
		t.Fatalf("removed %q, want %q", removed, want)
	}
	if _, err := os.Stat(filepath.Join(wh, "shop.db")); err != nil {
		t.Fatalf("the namespace's directory: %v, want it kept", err)
	}

	keep := filepath.Join(tbl, "data", "other.parquet")
	if err := os.MkdirAll(filepath.Join(tbl, "metadata"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(keep), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keep, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	removed, err = removeEmptyLocalDirs(tbl)
	if err != nil || !slices.Equal(removed, []string{filepath.Join(tbl, "metadata")}) {
		t.Fatalf("with a file left: removed %q (%v), want only metadata", removed, err)
	}
	if _, err := os.Stat(keep); err != nil {
		t.Fatalf("the file left: %v", err)
	}
	for _, loc := range []string{"s3://lake/warehouse/shop.db/orders", filepath.Join(wh, "missing")} {
		if removed, err := removeEmptyLocalDirs(loc); err != nil || removed != nil {
			t.Fatalf("%s: removed %q (%v), want nothing", loc, removed, err)
		}
	}
}
