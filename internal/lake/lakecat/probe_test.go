package lakecat

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The write probe writes, reads back and removes one object in a local
// warehouse, and fails with the path on a directory it cannot write.
func TestProbeWrite(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	fsys, loc, ok, err := WarehouseIO(ctx, CatalogConfig{LocalDir: dir})
	if err != nil || !ok || loc != "file://"+filepath.Join(dir, "warehouse") {
		t.Fatalf("WarehouseIO: %q, %v, %v", loc, ok, err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "warehouse"), 0o755); err != nil {
		t.Fatal(err)
	}
	path, err := ProbeWrite(ctx, fsys, loc)
	if err != nil || !strings.HasPrefix(path, loc+"/.lakemirror-probe-") {
		t.Fatalf("probe: %q, %v", path, err)
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "warehouse")); len(left) != 0 {
		t.Fatalf("the probe left %v", left)
	}
	file := filepath.Join(dir, "a-file") // a "directory" under a file: not writable, also for root
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ProbeWrite(ctx, fsys, "file://"+file+"/warehouse"); err == nil || !strings.HasPrefix(err.Error(), "lake: write file://"+file+"/warehouse/.lakemirror-probe-") {
		t.Fatalf("under a file: %v", err)
	}
	if _, _, ok, err := WarehouseIO(ctx, CatalogConfig{Type: "rest", URI: "http://r:8181", Warehouse: "lake"}); ok || err != nil {
		t.Fatalf("a named REST warehouse: ok %v, %v", ok, err)
	}
}
