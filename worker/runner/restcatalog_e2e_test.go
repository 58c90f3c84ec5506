//go:build e2e

package runner

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"

	"github.com/lakemirror/lakemirror/internal/testskip"
)

// Environment of TestRESTCatalogS3EndToEnd, set by scripts/reststack/run.sh
// (which starts Apache Iceberg's REST catalog server and an S3-compatible
// object store on loopback); the catalog properties and report are the
// suite's (envSuiteProps, envSuiteReport).
const (
	envRESTURI       = "LAKEMIRROR_TEST_REST_URI"  // REST catalog endpoint, e.g. http://127.0.0.1:8181
	envRESTWarehouse = "LAKEMIRROR_TEST_WAREHOUSE" // s3://bucket/prefix
)

// The catalog layer's claim, run: with CATALOG_TYPE=rest, a CATALOG_URI,
// an s3:// WAREHOUSE and CATALOG_PROPS with the S3 endpoint and keys, the
// catalog and storage suite (runStorageSuite) passes against Apache
// Iceberg's REST catalog server and S3-compatible storage.
func TestRESTCatalogS3EndToEnd(t *testing.T) {
	uri, wh := os.Getenv(envRESTURI), os.Getenv(envRESTWarehouse)
	if uri == "" {
		testskip.Skip(t, fmt.Sprintf("%s is not set: this test needs a running Iceberg REST catalog and S3-compatible storage; run scripts/reststack/run.sh", envRESTURI))
	}
	if !strings.HasPrefix(wh, "s3://") {
		t.Fatalf("%s=%q: want an s3:// warehouse", envRESTWarehouse, wh)
	}
	bucket, _, _ := strings.Cut(strings.TrimPrefix(wh, "s3://"), "/")
	runStorageSuite(t, storageSuite{name: "restcat", catType: catalog.REST, root: "s3://" + bucket + "/",
		flags: []string{"-catalog-type=rest", "-catalog-uri=" + uri, "-warehouse=" + wh, "-catalog-props=" + os.Getenv(envSuiteProps)}})
}
