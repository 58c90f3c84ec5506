package lake

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
	} {
		if got := c.cfg.Identity(); got != c.want {
			t.Errorf("%+v: Identity() = %q, want %q", c.cfg, got, c.want)
		}
	}
}
