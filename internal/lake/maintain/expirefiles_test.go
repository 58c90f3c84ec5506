package maintain

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	iceio "github.com/apache/iceberg-go/io"
)

// bulkFS is a BulkRemovableIO whose bulk request deletes only the first
// path and reports an error for the rest, as a partly failed object
// store batch delete does.
type bulkFS struct{ iceio.LocalFS }

func (b bulkFS) DeleteFiles(_ context.Context, paths []string) ([]string, error) {
	if len(paths) == 0 {
		return nil, nil
	}
	if err := b.Remove(paths[0]); err != nil {
		return nil, err
	}
	return paths[:1], errors.New("throttled")
}

// removeFiles counts a path already gone as deleted (two overlapping
// expiries name the same files), retries one by one what a bulk request
// did not delete, and reports the paths it could not delete.
func TestRemoveFiles(t *testing.T) {
	dir := t.TempDir()
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	gone := filepath.Join(dir, "gone")
	stuck := filepath.Join(dir, "stuck")
	if err := os.MkdirAll(filepath.Join(stuck, "inner"), 0o755); err != nil { // a non-empty directory: Remove fails
		t.Fatal(err)
	}
	for _, fs := range []iceio.IO{iceio.LocalFS{}, bulkFS{}} {
		a, b, c := mk("a"), mk("b"), mk("c")
		n, err := removeFiles(context.Background(), fs, []string{a, gone, b, c})
		if n != 4 || err != nil {
			t.Fatalf("%T: %d deleted, %v; want 4, no error", fs, n, err)
		}
		for _, p := range []string{a, b, c} {
			if _, err := os.Stat(p); !errors.Is(err, os.ErrNotExist) {
				t.Fatalf("%T: %s still there (%v)", fs, p, err)
			}
		}
		a = mk("a")
		n, err = removeFiles(context.Background(), fs, []string{a, stuck})
		if n != 1 || err == nil {
			t.Fatalf("%T with a path that cannot go: %d deleted, %v; want 1 and an error", fs, n, err)
		}
	}
}
