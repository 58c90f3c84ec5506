package runner

import (
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"
)

// Environment of the cloud storage and Glue tests: each runs when its
// warehouse is set, by its script (scripts/gcsstack, scripts/azurestack,
// scripts/gluestack), which starts the emulator on loopback and sets the
// credentials in the standard variables (STORAGE_EMULATOR_HOST,
// AZURE_STORAGE_CONNECTION_STRING, AWS_*); the catalog properties, data
// dir and report are the suite's (envSuiteProps, envSuiteDataDir,
// envSuiteReport).
const (
	envGCSWarehouse   = "LAKEMIRROR_TEST_GCS_WAREHOUSE"   // gs://bucket/prefix
	envAzureWarehouse = "LAKEMIRROR_TEST_AZURE_WAREHOUSE" // abfs[s]://container@account.dfs.core.windows.net/prefix or wasb[s]://…
	envGlueWarehouse  = "LAKEMIRROR_TEST_GLUE_WAREHOUSE"  // s3://bucket/prefix, the Glue catalog's tables
)

// suiteWarehouse returns the warehouse in env and its bucket or
// container root (scheme://authority/), skipping the test when env is
// unset and failing it when the location is not one of schemes.
func suiteWarehouse(t *testing.T, env, script string, schemes ...string) (wh, root string) {
	t.Helper()
	wh = os.Getenv(env)
	if wh == "" {
		t.Skipf("%s is not set: this test needs its storage emulator; run scripts/%s/run.sh", env, script)
	}
	u, err := url.Parse(wh)
	if err != nil || u.Host == "" {
		t.Fatalf("%s=%q: not a location", env, wh)
	}
	ok := false
	for _, s := range schemes {
		ok = ok || u.Scheme == s
	}
	if !ok {
		t.Fatalf("%s=%q: want a %s location", env, wh, strings.Join(schemes, ", "))
	}
	auth := u.Host
	if u.User != nil {
		auth = u.User.Username() + "@" + u.Host
	}
	return wh, u.Scheme + "://" + auth + "/"
}

// Google Cloud Storage through iceberg-go's gocloud FileIO: the default
// SQLite catalog with a gs:// WAREHOUSE, credentials from the
// environment (STORAGE_EMULATOR_HOST: fake-gcs-server), passes the
// catalog and storage suite (runStorageSuite).
func TestGCSStorageEndToEnd(t *testing.T) {
	wh, root := suiteWarehouse(t, envGCSWarehouse, "gcsstack", "gs")
	runStorageSuite(t, storageSuite{name: "gcs", catType: catalog.SQL, root: root,
		flags: []string{"-warehouse=" + wh, "-catalog-props=" + os.Getenv(envSuiteProps)}})
}

// Azure Blob Storage / ADLS Gen2 through iceberg-go's gocloud FileIO: the
// default SQLite catalog with an abfs:// or wasb:// WAREHOUSE,
// credentials from the environment (AZURE_STORAGE_CONNECTION_STRING:
// Azurite), passes the catalog and storage suite (runStorageSuite).
func TestAzureStorageEndToEnd(t *testing.T) {
	wh, root := suiteWarehouse(t, envAzureWarehouse, "azurestack", "abfs", "abfss", "wasb", "wasbs")
	runStorageSuite(t, storageSuite{name: "azure", catType: catalog.SQL, root: root,
		flags: []string{"-warehouse=" + wh, "-catalog-props=" + os.Getenv(envSuiteProps)}})
}

// The AWS Glue Data Catalog (iceberg-go catalog/glue) with an s3://
// WAREHOUSE: CATALOG_TYPE=glue, glue.endpoint and s3.endpoint in
// CATALOG_PROPS, credentials and region from the AWS environment
// (moto_server serving Glue and S3), passes the catalog and storage
// suite (runStorageSuite).
func TestGlueCatalogEndToEnd(t *testing.T) {
	wh, root := suiteWarehouse(t, envGlueWarehouse, "gluestack", "s3")
	runStorageSuite(t, storageSuite{name: "glue", catType: catalog.Glue, root: root,
		flags: []string{"-catalog-type=glue", "-warehouse=" + wh, "-catalog-props=" + os.Getenv(envSuiteProps)}})
}
