package lakecat

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/apache/iceberg-go"
	"github.com/apache/iceberg-go/catalog"
	_ "github.com/apache/iceberg-go/catalog/glue" // registers catalog type "glue"
	_ "github.com/apache/iceberg-go/catalog/rest" // registers catalog types "rest", "http", "https"
	sqlcat "github.com/apache/iceberg-go/catalog/sql"
	_ "github.com/apache/iceberg-go/io/gocloud/azure" // registers abfs/abfss/wasb/wasbs FileIO
	_ "github.com/apache/iceberg-go/io/gocloud/gcs"   // registers gs FileIO
	_ "github.com/apache/iceberg-go/io/gocloud/s3"    // registers s3/s3a/s3n FileIO
	_ "modernc.org/sqlite"                            // database/sql driver "sqlite" for the SQL catalog
)

// CatalogConfig says which Iceberg catalog to use and where tables live.
// It maps onto iceberg-go's catalog.Load properties, so any catalog type
// linked here works without code changes: "sql" (SQLite, PostgreSQL,
// MySQL via database/sql), "rest" (Polaris, Lakekeeper, Nessie, Glue
// REST, S3 Tables) and "glue" (the AWS Glue Data Catalog); storage:
// local files, S3-compatible object stores (s3.* properties), Google
// Cloud Storage (gs://, gcs.* properties) and Azure Blob Storage / ADLS
// Gen2 (abfs[s]://, wasb[s]://, adls.* properties). Credentials the
// properties leave out come from each cloud's standard chain (AWS_*
// variables and profiles, Application Default Credentials, AZURE_STORAGE_*
// variables or DefaultAzureCredential; StorageEnv).
type CatalogConfig struct {
	Name      string            // catalog name (rows in a SQL catalog are keyed by it); default "lakemirror"
	Type      string            // "sql" (default), "rest" or "glue"
	URI       string            // sql: database/sql DSN (default: SQLite file catalog.db under LocalDir); rest: endpoint URL; glue: none (glue.endpoint in Props)
	Warehouse string            // table root: file:///var/lib/lakemirror/warehouse, s3://bucket/prefix, gs://bucket/prefix, abfss://container@account.dfs.core.windows.net/prefix, wasbs://container@account.blob.core.windows.net/prefix (default: LocalDir/warehouse; glue: required)
	Props     map[string]string // extra catalog/FileIO properties: s3.*, gcs.*, adls.*, glue.*, credential, token, sql.driver, sql.dialect, ...
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
// information and query parameters of URLs, except an Azure location's
// container, password and other fields but host, port and dbname of
// key=value DSNs), plus "name=<Name>" for a catalog name other than the
// default. A glue catalog's URI is its glue.endpoint ("-" for AWS's own),
// followed by "glue.id=<catalog id>" and "region=<glue.region>" when the
// properties set them. It holds no secrets: it is recorded in workflow
// memos and histories. Two configurations of one catalog under different
// addresses have different identities (set ID).
func (c CatalogConfig) Identity() string {
	if c.ID != "" {
		return c.ID
	}
	typ, uri, wh := c.Type, c.URI, c.Warehouse
	if typ == "" {
		typ = "sql"
	}
	props, err := c.Properties()
	if err == nil {
		uri, wh = props["uri"], props["warehouse"]
	}
	if typ == "glue" {
		uri = c.Props[glueEndpoint]
	}
	parts := []string{typ, redactLocation(uri), redactLocation(wh)}
	if typ == "glue" {
		for _, kv := range [][2]string{{"glue.id", c.Props[glueCatalogID]}, {"region", c.Props[glueRegion]}} {
			if kv[1] != "" {
				parts = append(parts, kv[0]+"="+kv[1])
			}
		}
	}
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
		container := ""
		if u.User != nil && azureSchemes[u.Scheme] {
			container = u.User.Username() // abfss://container@account...: a name, not a credential
		}
		u.User, u.RawQuery, u.ForceQuery, u.Fragment = nil, "", false, ""
		if container != "" {
			u.User = url.User(container)
		}
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

// Properties returns the catalog.Load properties for c: Props, then
// "type", "uri" and "warehouse", with the SQLite defaults filled in for
// type "sql" and the storage credentials of the process environment
// added where Props name none (StorageEnv). Errors: a sql catalog
// without URI or LocalDir; a glue catalog with a URI or without a
// warehouse; the environment's Azure account naming another account than
// the warehouse.
func (c CatalogConfig) Properties() (iceberg.Properties, error) {
	return c.properties(os.LookupEnv)
}

func (c CatalogConfig) properties(lookup func(string) (string, bool)) (iceberg.Properties, error) {
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
	switch typ {
	case "sql":
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
	case "glue":
		if uri != "" {
			return nil, fmt.Errorf("lake: the glue catalog takes no URI (%s): AWS Glue is reached through the AWS SDK; for another endpoint (an emulator) set %s=<url> in the catalog properties", redactLocation(uri), glueEndpoint)
		}
		if wh == "" {
			return nil, fmt.Errorf("lake: the glue catalog needs a warehouse (s3://bucket/prefix): Glue holds each table's metadata location, the files are under the warehouse")
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
	if err := storageEnv(props, wh, lookup); err != nil {
		return nil, err
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
// come from Properties and iceberg-go's catalog.Load (unknown type,
// unreachable REST endpoint, bad DSN, incomplete AWS credentials), with
// credentials redacted (redactError).
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
		return nil, redactError(props, fmt.Errorf("lake: open %s catalog: %w", props["type"], err))
	}
	return cat, nil
}
