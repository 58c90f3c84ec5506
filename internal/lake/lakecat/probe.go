package lakecat

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"syscall"
	"time"

	iceio "github.com/apache/iceberg-go/io"
)

// WarehouseIO opens the FileIO of the warehouse location cfg names (the
// warehouse property with the local default filled in) with the catalog's
// FileIO properties (s3.*, gcs.*, adls.*, with the environment's
// credentials: CatalogConfig.Properties). ok is false when the warehouse
// is not a location (REST catalogs often name warehouses, "lake") or not
// set. Errors: the FileIO's (an unknown scheme, bad credentials
// settings), credentials redacted (redactError).
func WarehouseIO(ctx context.Context, cfg CatalogConfig) (fsys iceio.IO, location string, ok bool, err error) {
	props, err := cfg.Properties()
	if err != nil {
		return nil, "", false, err
	}
	location = props["warehouse"]
	if !strings.Contains(location, "://") && !strings.HasPrefix(location, "/") {
		return nil, location, false, nil
	}
	fsys, err = iceio.LoadFS(ctx, props, location)
	if err != nil {
		return nil, location, true, redactError(props, fmt.Errorf("lake: file IO for %s: %w", location, err))
	}
	return fsys, location, true, nil
}

// ProbeWrite checks that location (a directory URI: a warehouse or a
// table's location) is writable through fsys: it reads the object
// <location>/.lakemirror-probe-<nanoseconds>, which must not exist (any
// other answer, bad credentials among them, is the error: it names the
// cause, which a failed upload through iceberg-go's Azure FileIO does
// not, see docs/storage.md), then writes it, reads it back and removes it,
// and returns its path. Errors name the step that failed; an object that
// could not be removed is named in the error.
func ProbeWrite(ctx context.Context, fsys iceio.IO, location string) (string, error) {
	wfs, ok := fsys.(iceio.WriteFileIO)
	if !ok {
		return "", fmt.Errorf("lake: the file IO of %s cannot write files", location)
	}
	path := strings.TrimSuffix(location, "/") + fmt.Sprintf("/.lakemirror-probe-%d", time.Now().UnixNano())
	if f, err := fsys.Open(path); err == nil {
		f.Close()
	} else if !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
		return path, fmt.Errorf("lake: read %s: %w", path, err)
	}
	body := []byte("lakemirror doctor: a write probe, removed at once\n")
	if err := wfs.WriteFile(path, body); err != nil {
		return path, fmt.Errorf("lake: write %s: %w", path, err)
	}
	f, err := fsys.Open(path)
	if err == nil {
		var got []byte
		got, err = io.ReadAll(f)
		f.Close()
		if err == nil && !bytes.Equal(got, body) {
			err = fmt.Errorf("read back %d bytes, wrote %d", len(got), len(body))
		}
	}
	rmErr := fsys.Remove(path)
	if err != nil {
		return path, fmt.Errorf("lake: read %s back: %w", path, err)
	}
	if rmErr != nil {
		return path, fmt.Errorf("lake: remove %s: %w (remove it by hand)", path, rmErr)
	}
	return path, ctx.Err()
}
