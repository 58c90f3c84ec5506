//go:build e2e

package main

import (
	"context"
	"database/sql"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/lakemirror/lakemirror/internal/lake"
)

// The starter prints a command's error without the credentials a storage
// client quoted in it: a table whose metadata is in Azure, read with a SAS
// token through a port nothing listens on, fails with Go's net/http error,
// which quotes the request URL and so the SAS signature.
func TestStarterErrorRedactsSAS(t *testing.T) {
	dir := t.TempDir()
	dsn := "file:" + filepath.Join(dir, "catalog.db")
	cfg := lake.CatalogConfig{URI: dsn, LocalDir: dir}
	if _, err := lake.OpenCatalog(context.Background(), cfg); err != nil { // creates the SQL catalog's tables
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const meta = "wasb://lake@acct.blob.core.windows.net/wh/shop.db/orders/metadata/00001.metadata.json"
	if _, err := db.Exec(`INSERT INTO iceberg_tables (catalog_name, table_namespace, table_name, metadata_location) VALUES ('lakemirror', 'shop', 'orders', ?)`, meta); err != nil {
		t.Fatal(err)
	}
	addr := closedAddr(t)
	code, out, errs := cli(t, "dump", "shop.orders", "--data-dir", dir, "--catalog-uri", dsn, "--warehouse", "wasb://lake@acct.blob.core.windows.net/wh",
		"--catalog-props", "adls.sas-token.acct.blob.core.windows.net=sv=2024-11-04&sp=rl&sig=c2VjcmV0LXNpZw%3D%3D,adls.endpoint="+addr+",adls.protocol=http")
	want := fmt.Sprintf("starter: lake: load shop.orders: ReadFile %s: blob (key \"wh/shop.db/orders/metadata/00001.metadata.json\") (code=Unknown): "+
		"Get \"http://%s/acct/lake/wh%%2Fshop.db%%2Forders%%2Fmetadata%%2F00001.metadata.json?sig=REDACTED&sp=rl&sv=2024-11-04\": dial tcp %s: connect: connection refused\n",
		meta, addr, addr)
	if code != exitFailure || out != "" || errs != want {
		t.Fatalf("exit %d, stdout %q, stderr\n%s\nwant\n%s", code, out, errs, want)
	}
}
