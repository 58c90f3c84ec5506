package lake

import (
	"context"
	"fmt"
	"net/url"
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
	// ID, when set, is the catalog's identity for the workers' wiring
	// check instead of the one derived from the settings (Identity): give
	// every worker of one catalog the same ID when they reach it under
	// different addresses.
	ID string
}

// Identity names the catalog c opens, for the check that every worker
// serving a table uses the table's catalog: ID when set, else
// "<type> <uri> <warehouse>" with the defaults filled in (the local
// SQLite file and warehouse under LocalDir) and credentials removed (user
// information and query parameters of URLs, password and other fields
// but host, port and dbname of key=value DSNs), plus "name=<Name>" for a
// catalog name other than the default. It holds no secrets: it is
// recorded in workflow memos and histories. Two configurations of one
// catalog under different addresses have different identities (set ID).
func (c CatalogConfig) Identity() string {
	if c.ID != "" {
		return c.ID
	}
	typ, uri, wh := c.Type, c.URI, c.Warehouse
	if typ == "" {
		typ = "sql"
	}
	if props, err := c.Properties(); err == nil {
		uri, wh = props["uri"], props["warehouse"]
	}
	parts := []string{typ, redactLocation(uri), redactLocation(wh)}
	if c.Name != "" && c.Name != "lakemirror" {
		parts = append(parts, "name="+c.Name)
	}
	return strings.Join(parts, " ")
}

// redactLocation removes credentials from a catalog URI, DSN or
// warehouse location ("" stays "", shown as "-").
func redactLocation(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "-"
	}
	if strings.Contains(s, "=") && !strings.Contains(s, "://") && !strings.HasPrefix(s, "file:") {
		var keep []string // a key=value DSN: host=db port=5432 user=u password=p dbname=cat
		for _, f := range strings.Fields(s) {
			k, _, _ := strings.Cut(f, "=")
			switch strings.ToLower(k) {
			case "host", "hostaddr", "port", "dbname":
				keep = append(keep, f)
			}
		}
		return strings.Join(keep, " ")
	}
	if u, err := url.Parse(s); err == nil && u.Scheme != "" {
		u.User, u.RawQuery, u.ForceQuery, u.Fragment = nil, "", false, ""
		return u.String()
	}
	if at := strings.LastIndex(s, "@"); at >= 0 {
		s = s[at+1:]
	}
	if q := strings.IndexByte(s, '?'); q >= 0 {
		s = s[:q]
	}
	return s
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
