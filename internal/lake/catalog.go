package lake

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/rest" // registers catalog types "rest", "http", "https"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	_ "github.com/apache/iceberg-go/io/gocloud/s3" // registers s3/s3a/s3n FileIO
	_ "modernc.org/sqlite"                         // database/sql driver "sqlite" for the SQL catalog
)

// CatalogConfig says which Iceberg catalog to use and where tables live.
// It maps onto iceberg-go's catalog.Load properties, so any catalog type
// linked here works without code changes: "sql" (SQLite, PostgreSQL,
// MySQL via database/sql) and "rest" (Polaris, Lakekeeper, Nessie, Glue
// REST, S3 Tables); storage: local files and S3-compatible object stores
// (s3.* properties).
type CatalogConfig struct {
	Name      string            // catalog name (rows in a SQL catalog are keyed by it); default "lakemirror"
	Type      string            // "sql" (default) or "rest"
	URI       string            // sql: database/sql DSN (default: SQLite file catalog.db under LocalDir); rest: endpoint URL
	Warehouse string            // table root, e.g. file:///var/lib/lakemirror/warehouse or s3://bucket/prefix (default: LocalDir/warehouse)
	Props     map[string]string // extra catalog/FileIO properties: s3.endpoint, s3.region, s3.access-key-id, credential, token, sql.driver, sql.dialect, ...
	LocalDir  string            // directory for the default SQLite catalog and warehouse when URI/Warehouse are empty
}

// Properties returns the catalog.Load properties for c, with the SQLite
// defaults filled in for type "sql".
func (c CatalogConfig) Properties() (iceberg.Properties, error) {
	props := iceberg.Properties{}
	for k, v := range c.Props {
		props[k] = v
	}
	typ := c.Type
	if typ == "" {
		typ = "sql"
	}
	props["type"] = typ
	uri, wh := c.URI, c.Warehouse
	if typ == "sql" {
		if props[sqlcat.DriverKey] == "" {
			props[sqlcat.DriverKey] = "sqlite"
		}
		if props[sqlcat.DialectKey] == "" {
			props[sqlcat.DialectKey] = "sqlite"
		}
		if uri == "" {
			if c.LocalDir == "" {
				return nil, fmt.Errorf("lake: the sql catalog needs a URI or a local directory")
			}
			uri = "file:" + filepath.Join(c.LocalDir, "catalog.db") + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)"
		}
	}
	if wh == "" && c.LocalDir != "" {
		wh = "file://" + filepath.Join(c.LocalDir, "warehouse")
	}
	if uri != "" {
		props["uri"] = uri
	}
	if wh != "" {
		props["warehouse"] = wh
	}
	return props, nil
}

// LocalCatalogMissing returns the path of the default SQLite catalog file
// when cfg uses it (type sql, no URI) and the file does not exist yet, else
// "". Readers use it to say where they looked instead of creating an empty
// catalog.
func (c CatalogConfig) LocalCatalogMissing() string {
	if (c.Type != "" && c.Type != "sql") || c.URI != "" || c.LocalDir == "" {
		return ""
	}
	path := filepath.Join(c.LocalDir, "catalog.db")
	if _, err := os.Stat(path); err == nil {
		return ""
	}
	return path
}

// OpenCatalog opens the catalog described by cfg. For the default SQLite
// catalog it creates LocalDir (and the warehouse directory) first. Errors
// come from iceberg-go's catalog.Load (unknown type, unreachable REST
// endpoint, bad DSN).
func OpenCatalog(ctx context.Context, cfg CatalogConfig) (catalog.Catalog, error) {
	props, err := cfg.Properties()
	if err != nil {
		return nil, err
	}
	if cfg.LocalDir != "" {
		if err := os.MkdirAll(cfg.LocalDir, 0o755); err != nil {
			return nil, fmt.Errorf("lake: %w", err)
		}
		if wh := props["warehouse"]; strings.HasPrefix(wh, "file://") {
			if err := os.MkdirAll(strings.TrimPrefix(wh, "file://"), 0o755); err != nil {
				return nil, fmt.Errorf("lake: %w", err)
			}
		}
	}
	name := cfg.Name
	if name == "" {
		name = "lakemirror"
	}
	cat, err := catalog.Load(ctx, name, props)
	if err != nil {
		return nil, fmt.Errorf("lake: open %s catalog: %w", props["type"], err)
	}
	return cat, nil
}
