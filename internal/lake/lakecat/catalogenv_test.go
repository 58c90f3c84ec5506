package lakecat

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// envOf is a lookup over a fixed environment.
func envOf(kv ...string) func(string) (string, bool) {
	m := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		m[kv[i]] = kv[i+1]
	}
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// propsText renders properties as sorted k=v lines.
func propsText(p map[string]string) string {
	var lines []string
	for _, k := range slices.Sorted(maps.Keys(p)) {
		lines = append(lines, k+"="+p[k])
	}
	return strings.Join(lines, "\n")
}

// The standard environment variables give a gs:// or Azure warehouse its
// credentials where CATALOG_PROPS names none; properties win over the
// environment; S3 and Glue are left to the AWS SDK's own chain.
func TestStorageCredentialsFromEnv(t *testing.T) {
	const cs = "DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=a2V5;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;"
	for _, c := range []struct {
		name string
		cfg  CatalogConfig
		env  []string
		want string // the properties, sorted, or the error
	}{
		{"gcs emulator with a scheme", CatalogConfig{Warehouse: "gs://lake/wh", LocalDir: "/d"},
			[]string{"STORAGE_EMULATOR_HOST", "http://127.0.0.1:4443"},
			"gcs.no-auth=true\ngcs.service.host=http://127.0.0.1:4443/storage/v1/\nsql.dialect=sqlite\nsql.driver=sqlite\ntype=sql\n" +
				"uri=file:/d/catalog.db?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)\nwarehouse=gs://lake/wh"},
		{"gcs emulator host:port", CatalogConfig{Type: "rest", URI: "http://r", Warehouse: "gs://lake/wh"},
			[]string{"STORAGE_EMULATOR_HOST", "127.0.0.1:4443"},
			"gcs.no-auth=true\ntype=rest\nuri=http://r\nwarehouse=gs://lake/wh"},
		{"gcs emulator, explicit credentials and endpoint kept", CatalogConfig{Type: "rest", URI: "http://r", Warehouse: "gs://lake/wh",
			Props: map[string]string{"gcs.keypath": "/sa.json", "gcs.service.host": "http://gcs:9000/storage/v1/"}},
			[]string{"STORAGE_EMULATOR_HOST", "http://127.0.0.1:4443"},
			"gcs.keypath=/sa.json\ngcs.service.host=http://gcs:9000/storage/v1/\ntype=rest\nuri=http://r\nwarehouse=gs://lake/wh"},
		{"gcs without an emulator: application default credentials", CatalogConfig{Type: "rest", URI: "http://r", Warehouse: "gs://lake/wh"},
			[]string{"GOOGLE_APPLICATION_CREDENTIALS", "/sa.json"}, "type=rest\nuri=http://r\nwarehouse=gs://lake/wh"},
		{"azure connection string", CatalogConfig{Type: "rest", URI: "http://r", Warehouse: "abfs://lake@devstoreaccount1.dfs.core.windows.net/wh"},
			[]string{"AZURE_STORAGE_CONNECTION_STRING", cs, "AZURE_STORAGE_KEY", "ignored"},
			"adls.connection-string.devstoreaccount1=" + cs + "\ntype=rest\nuri=http://r\nwarehouse=abfs://lake@devstoreaccount1.dfs.core.windows.net/wh"},
		{"azure shared key", CatalogConfig{Type: "rest", URI: "http://r", Warehouse: "wasbs://lake@acct.blob.core.windows.net/wh"},
			[]string{"AZURE_STORAGE_ACCOUNT", "acct", "AZURE_STORAGE_KEY", "a2V5"},
			"adls.auth.shared-key.account.key=a2V5\nadls.auth.shared-key.account.name=acct\ntype=rest\nuri=http://r\nwarehouse=wasbs://lake@acct.blob.core.windows.net/wh"},
		{"azure SAS token", CatalogConfig{Type: "rest", URI: "http://r", Warehouse: "abfss://lake@acct.dfs.core.windows.net/wh"},
			[]string{"AZURE_STORAGE_SAS_TOKEN", "?sv=2024-01-01&sp=rwdl&sig=c2ln"},
			"adls.sas-token.acct.dfs.core.windows.net=sv=2024-01-01&sp=rwdl&sig=c2ln\ntype=rest\nuri=http://r\nwarehouse=abfss://lake@acct.dfs.core.windows.net/wh"},
		{"azure properties win", CatalogConfig{Type: "rest", URI: "http://r", Warehouse: "abfss://lake@acct.dfs.core.windows.net/wh",
			Props: map[string]string{"adls.auth.managed-identity.enabled": "true"}},
			[]string{"AZURE_STORAGE_CONNECTION_STRING", cs},
			"adls.auth.managed-identity.enabled=true\ntype=rest\nuri=http://r\nwarehouse=abfss://lake@acct.dfs.core.windows.net/wh"},
		{"azure without: DefaultAzureCredential", CatalogConfig{Type: "rest", URI: "http://r", Warehouse: "abfss://lake@acct.dfs.core.windows.net/wh"},
			[]string{"AZURE_CLIENT_SECRET", "s"}, "type=rest\nuri=http://r\nwarehouse=abfss://lake@acct.dfs.core.windows.net/wh"},
		{"azure key of another account", CatalogConfig{Type: "rest", URI: "http://r", Warehouse: "abfss://lake@acct.dfs.core.windows.net/wh"},
			[]string{"AZURE_STORAGE_ACCOUNT", "other", "AZURE_STORAGE_KEY", "a2V5"},
			"lake: AZURE_STORAGE_ACCOUNT=other but the warehouse abfss://lake@acct.dfs.core.windows.net/wh is in account acct: the shared key AZURE_STORAGE_KEY belongs to one account"},
		{"azure location without container", CatalogConfig{Type: "rest", URI: "http://r", Warehouse: "abfss://acct.dfs.core.windows.net/wh"}, nil,
			"lake: warehouse abfss://acct.dfs.core.windows.net/wh: an Azure location is abfss://<container>@<account>.dfs.core.windows.net/<path>"},
		{"glue: AWS chain, no local warehouse", CatalogConfig{Type: "glue", Warehouse: "s3://lake/wh", LocalDir: "/d", Props: map[string]string{"glue.region": "us-east-1"}},
			[]string{"AWS_ACCESS_KEY_ID", "k", "AWS_SECRET_ACCESS_KEY", "s"}, "glue.region=us-east-1\ntype=glue\nwarehouse=s3://lake/wh"},
		{"glue without warehouse", CatalogConfig{Type: "glue", LocalDir: "/d"}, nil,
			"lake: the glue catalog needs a warehouse (s3://bucket/prefix): Glue holds each table's metadata location, the files are under the warehouse"},
		{"glue with a URI", CatalogConfig{Type: "glue", URI: "https://u:p@glue.example", Warehouse: "s3://lake/wh"}, nil,
			"lake: the glue catalog takes no URI (https://glue.example): AWS Glue is reached through the AWS SDK; for another endpoint (an emulator) set glue.endpoint=<url> in the catalog properties"},
	} {
		t.Run(c.name, func(t *testing.T) {
			props, err := c.cfg.properties(envOf(c.env...))
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = propsText(props)
			}
			if got != c.want {
				t.Fatalf("got\n%s\nwant\n%s", got, c.want)
			}
		})
	}
}

// Redaction of exact texts: secret property values, the secret
// environment variables, SAS and pre-signed URL signatures and a
// connection string's key; other values (key ids, bucket names, short
// values) stay.
func TestRedactText(t *testing.T) {
	t.Setenv("AWS_SECRET_ACCESS_KEY", "env-aws-secret-value")
	t.Setenv("AZURE_STORAGE_KEY", "")
	props := map[string]string{"s3.access-key-id": "lakemirror", "s3.secret-access-key": "lakemirror-secret",
		"adls.auth.shared-key.account.key": "c2hhcmVkLWtleQ==", "token": "abc", "gcs.oauth2.token": "ya29.a0AfH6SM"}
	for in, want := range map[string]string{
		`PUT s3://lakemirror/wh: InvalidAccessKeyId: key lakemirror, secret lakemirror-secret`:               `PUT s3://lakemirror/wh: InvalidAccessKeyId: key lakemirror, secret REDACTED`,
		`Get "http://127.0.0.1:1/acct/lake/wh%2Fx?se=2030&sig=abc%2Bdef%3D&sp=rw&sv=2024": dial tcp`:         `Get "http://127.0.0.1:1/acct/lake/wh%2Fx?se=2030&sig=REDACTED&sp=rw&sv=2024": dial tcp`,
		`GET https://b.s3.amazonaws.com/k?X-Amz-Credential=AKIA%2F2026&X-Amz-Signature=f00d&X-Amz-Expires=9`: `GET https://b.s3.amazonaws.com/k?X-Amz-Credential=REDACTED&X-Amz-Signature=REDACTED&X-Amz-Expires=9`,
		`bad connection string "DefaultEndpointsProtocol=http;AccountName=a;AccountKey=eHl6;BlobEndpoint=x"`: `bad connection string "DefaultEndpointsProtocol=http;AccountName=a;AccountKey=REDACTED;BlobEndpoint=x"`,
		`auth with c2hhcmVkLWtleQ== and ya29.a0AfH6SM failed; token abc`:                                     `auth with REDACTED and REDACTED failed; token abc`,
		`the environment's env-aws-secret-value`:                                                             `the environment's REDACTED`,
		`nothing to hide in s3://lakemirror/wh`:                                                              `nothing to hide in s3://lakemirror/wh`,
	} {
		if got := RedactText(props, in); got != want {
			t.Errorf("RedactText(%q)\n = %q\nwant %q", in, got, want)
		}
	}
	inner := errors.New("secret lakemirror-secret")
	if err := redactError(props, fmt.Errorf("open: %w", inner)); err.Error() != "open: secret REDACTED" || errors.Unwrap(err) != nil {
		t.Errorf("redactError = %q (unwraps to %v)", err, errors.Unwrap(err))
	}
	clean := fmt.Errorf("open: %w", errors.New("no such table"))
	if err := redactError(props, clean); err != clean {
		t.Errorf("redactError changed a clean error: %v", err)
	}
}
