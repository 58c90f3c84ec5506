package lakecat

import "testing"

// A catalog's identity names type, URI and warehouse with the defaults
// filled in and without credentials; ID overrides it.
func TestCatalogIdentity(t *testing.T) {
	for _, c := range []struct {
		cfg  CatalogConfig
		want string
	}{
		{CatalogConfig{LocalDir: "/var/lib/lakemirror"}, "sql file:/var/lib/lakemirror/catalog.db file:///var/lib/lakemirror/warehouse"},
		{CatalogConfig{Type: "rest", URI: "http://iceberg-rest:8181", Warehouse: "s3://warehouse/", Props: map[string]string{"s3.secret-access-key": "password"}},
			"rest http://iceberg-rest:8181 s3://warehouse/"},
		{CatalogConfig{Type: "rest", URI: "https://admin:secret@polaris.example/api/catalog?token=abc", Warehouse: "lake"}, "rest https://polaris.example/api/catalog lake"},
		{CatalogConfig{Type: "sql", URI: "postgres://lm:hunter2@pg:5432/catalog?sslmode=require", Warehouse: "s3://b/p", Props: map[string]string{"sql.driver": "pgx"}},
			"sql postgres://pg:5432/catalog s3://b/p"},
		{CatalogConfig{Type: "sql", URI: "host=pg port=5432 user=lm password=hunter2 dbname=catalog sslmode=require", Warehouse: "s3://b/p"},
			"sql host=pg port=5432 dbname=catalog s3://b/p"},
		{CatalogConfig{Type: "rest", URI: "http://r:8181"}, "rest http://r:8181 -"},
		{CatalogConfig{Type: "rest", URI: "http://r:8181", Warehouse: "s3://w", Name: "prod"}, "rest http://r:8181 s3://w name=prod"},
		{CatalogConfig{Type: "rest", URI: "http://localhost:8181", ID: "prod-lake"}, "prod-lake"},
		// object stores: an Azure location keeps its container (a name), never a password or a SAS query
		{CatalogConfig{Type: "rest", URI: "http://r:8181", Warehouse: "gs://lake/wh", Props: map[string]string{"gcs.oauth2.token": "ya29.secret-token"}},
			"rest http://r:8181 gs://lake/wh"},
		{CatalogConfig{LocalDir: "/var/lib/lm", Warehouse: "abfss://bronze@acct.dfs.core.windows.net/wh",
			Props: map[string]string{"adls.auth.shared-key.account.name": "acct", "adls.auth.shared-key.account.key": "c2VjcmV0LWtleQ=="}},
			"sql file:/var/lib/lm/catalog.db abfss://bronze@acct.dfs.core.windows.net/wh"},
		{CatalogConfig{LocalDir: "/var/lib/lm", Warehouse: "abfss://silver@acct.dfs.core.windows.net/wh"},
			"sql file:/var/lib/lm/catalog.db abfss://silver@acct.dfs.core.windows.net/wh"},
		{CatalogConfig{Type: "rest", URI: "http://r:8181", Warehouse: "wasbs://lake:pw@acct.blob.core.windows.net/wh?sv=2024&sig=abc%2Bdef"},
			"rest http://r:8181 wasbs://lake@acct.blob.core.windows.net/wh"},
		// glue: no URI; the endpoint (an emulator's, or "-" for AWS), the catalog id and region name it; keys never
		{CatalogConfig{Type: "glue", Warehouse: "s3://lake/wh", Props: map[string]string{"glue.region": "eu-west-1", "glue.id": "123456789012",
			"glue.access-key-id": "AKIAEXAMPLE", "glue.secret-access-key": "wJalrXUtnFEMI/K7MDENG"}}, "glue - s3://lake/wh glue.id=123456789012 region=eu-west-1"},
		{CatalogConfig{Type: "glue", Warehouse: "s3://lake/wh", Props: map[string]string{"glue.endpoint": "http://127.0.0.1:5000"}},
			"glue http://127.0.0.1:5000 s3://lake/wh"},
	} {
		if got := c.cfg.Identity(); got != c.want {
			t.Errorf("%+v: Identity() = %q, want %q", c.cfg, got, c.want)
		}
	}
}
