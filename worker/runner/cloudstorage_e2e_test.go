//go:build e2e

package runner

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/apache/iceberg-go/catalog"

	"github.com/lakemirror/lakemirror/internal/lake"
	"github.com/lakemirror/lakemirror/internal/lake/lakecat"
	"github.com/lakemirror/lakemirror/internal/testskip"
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
		testskip.Skip(t, fmt.Sprintf("%s is not set: this test needs its storage emulator; run scripts/%s/run.sh", env, script))
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
//
// Then a wrong account key: the warehouse probe of `starter doctor`
// (lakecat.ProbeWrite) names Azure's refusal, redacted, where a write
// through iceberg-go's Azure FileIO would panic (gocloud.dev v0.47.0,
// docs/storage.md).
func TestAzureStorageEndToEnd(t *testing.T) {
	wh, root := suiteWarehouse(t, envAzureWarehouse, "azurestack", "abfs", "abfss", "wasb", "wasbs")
	runStorageSuite(t, storageSuite{name: "azure", catType: catalog.SQL, root: root,
		flags: []string{"-warehouse=" + wh, "-catalog-props=" + os.Getenv(envSuiteProps)}})

	cs := os.Getenv(lakecat.EnvAzureConnString)
	key := regexp.MustCompile(`AccountKey=[^;]*`).FindString(cs)
	if key == "" {
		t.Fatalf("%s holds no AccountKey", lakecat.EnvAzureConnString)
	}
	u, _ := url.Parse(wh)
	account, _, _ := strings.Cut(u.Host, ".")
	bad := lake.CatalogConfig{LocalDir: t.TempDir(), Warehouse: wh,
		Props: map[string]string{"adls.connection-string." + account: strings.Replace(cs, key, "AccountKey=d3Jvbmcta2V5", 1)}}
	fsys, loc, ok, err := lakecat.WarehouseIO(context.Background(), bad)
	if err != nil || !ok {
		t.Fatalf("WarehouseIO: %v, %v", ok, err)
	}
	_, err = lakecat.ProbeWrite(context.Background(), fsys, loc)
	if err == nil {
		t.Fatal("the probe passed with a wrong account key")
	}
	sep := strings.Repeat("-", 80)
	got := regexp.MustCompile(`probe-[0-9]+|RequestId:\S+|Time:\S+|127\.0\.0\.1:[0-9]+`).ReplaceAllStringFunc(bad.Redact(err.Error()), func(m string) string {
		k, _, _ := strings.Cut(m, ":")
		k, _, _ = strings.Cut(k, "-")
		return k + "<…>"
	})
	want := "lake: read abfs://lakemirror@devstoreaccount1.dfs.core.windows.net/warehouse/.lakemirror-probe<…>: " +
		"open abfs://lakemirror@devstoreaccount1.dfs.core.windows.net/warehouse/.lakemirror-probe<…>: " +
		"blob (key \"warehouse/.lakemirror-probe<…>\") (code=Unknown): GET http://127.0.0.1<…>/devstoreaccount1/lakemirror/warehouse%2F.lakemirror-probe<…>\n" +
		sep + "\nRESPONSE 403: 403 Server failed to authenticate the request. Make sure the value of the Authorization header is formed correctly including the signature.\n" +
		"ERROR CODE: AuthorizationFailure\n" + sep + "\n" +
		"<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"yes\"?>\n<Error>\n  <Code>AuthorizationFailure</Code>\n" +
		"  <Message>Server failed to authenticate the request. Make sure the value of the Authorization header is formed correctly including the signature.\n" +
		"RequestId<…>\nTime<…>\n</Error>\n" + sep + "\n"
	if got != want {
		t.Fatalf("probe with a wrong key:\n%s\nwant\n%s", got, want)
	}
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
