package lakecat

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"

	iceio "github.com/apache/iceberg-go/io"
)

// Property keys of iceberg-go's Glue catalog (catalog/glue) that
// lakemirror reads itself: the endpoint and catalog id name the catalog
// in Identity.
const (
	glueEndpoint  = "glue.endpoint"
	glueCatalogID = "glue.id"
	glueRegion    = "glue.region"
)

// azureSchemes are the location schemes of iceberg-go's Azure FileIO
// (io/gocloud/azure): <scheme>://<container>@<account>.<domain>/<path>.
var azureSchemes = map[string]bool{"abfs": true, "abfss": true, "wasb": true, "wasbs": true}

// Environment variables StorageEnv reads (beyond those the cloud SDKs
// read themselves: AWS_*, GOOGLE_APPLICATION_CREDENTIALS, AZURE_CLIENT_*).
const (
	EnvStorageEmulatorHost  = "STORAGE_EMULATOR_HOST"           // GCS emulator, host:port or http://host:port (Google's client libraries)
	EnvAzureConnString      = "AZURE_STORAGE_CONNECTION_STRING" // Azure Storage connection string (az CLI, Azure SDKs)
	EnvAzureAccount         = "AZURE_STORAGE_ACCOUNT"           // Azure Storage account name, with AZURE_STORAGE_KEY
	EnvAzureKey             = "AZURE_STORAGE_KEY"               // Azure Storage shared key
	EnvAzureSASToken        = "AZURE_STORAGE_SAS_TOKEN"         // Azure Storage SAS token
	envAzureClientSecret    = "AZURE_CLIENT_SECRET"             // read by DefaultAzureCredential; redacted
	envAWSSecretAccessKey   = "AWS_SECRET_ACCESS_KEY"           // read by the AWS SDK; redacted
	envAWSSessionToken      = "AWS_SESSION_TOKEN"               // read by the AWS SDK; redacted
	envGoogleOAuthToken     = "GOOGLE_OAUTH_ACCESS_TOKEN"       // read by some Google tools; redacted
	redacted                = "REDACTED"
	minRedactedSecretLength = 6 // shorter values are not searched for in texts (they would garble them)
)

// secretEnv lists the environment variables whose values are redacted
// from texts (RedactText) wherever they appear.
var secretEnv = []string{EnvAzureConnString, EnvAzureKey, EnvAzureSASToken, envAzureClientSecret,
	envAWSSecretAccessKey, envAWSSessionToken, envGoogleOAuthToken}

// storageEnv adds to props the storage credentials of the environment
// (lookup) for the warehouse location wh, where props name none, so
// that the standard variables work as they do for the clouds' own tools:
//
//   - gs:// with STORAGE_EMULATOR_HOST set: gcs.no-auth=true (the Google
//     client libraries send no credentials to an emulator), and, when the
//     variable has a scheme (http://host:port, the form other clients
//     take) and no gcs.service.host or gcs.endpoint is set,
//     gcs.service.host=<it>/storage/v1/ (the Go client builds upload
//     URLs from the scheme-less form only). Without it, credentials are
//     Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS,
//     gcloud's, the metadata server), read by iceberg-go.
//   - abfs[s]:// and wasb[s]:// without adls.connection-string.*,
//     adls.sas-token.*, adls.auth.shared-key.* or
//     adls.auth.managed-identity.enabled: AZURE_STORAGE_CONNECTION_STRING
//     as adls.connection-string.<account>; else AZURE_STORAGE_KEY (with
//     AZURE_STORAGE_ACCOUNT, which must then be the warehouse's account)
//     as the shared key; else AZURE_STORAGE_SAS_TOKEN as
//     adls.sas-token.<host>. Without any, iceberg-go uses
//     DefaultAzureCredential (AZURE_CLIENT_ID/AZURE_TENANT_ID/
//     AZURE_CLIENT_SECRET, workload and managed identity, az login).
//
// S3 and Glue need nothing here: the AWS SDK's default chain (AWS_*
// variables, profiles, instance roles) applies whenever s3.* / glue.*
// keys are not set. Errors: an Azure warehouse without container or
// account; AZURE_STORAGE_ACCOUNT naming another account than the
// warehouse's with AZURE_STORAGE_KEY.
func storageEnv(props map[string]string, wh string, lookup func(string) (string, bool)) error {
	get := func(k string) string {
		v, _ := lookup(k)
		return strings.TrimSpace(v)
	}
	u, err := url.Parse(wh)
	if err != nil || u.Scheme == "" {
		return nil // a warehouse name (REST) or a local path
	}
	switch {
	case u.Scheme == "gs":
		host := get(EnvStorageEmulatorHost)
		if host == "" {
			return nil
		}
		if !hasAny(props, iceio.GCSNoAuth, iceio.GCSOAuthToken, iceio.GCSJSONKey, iceio.GCSKeyPath) {
			props[iceio.GCSNoAuth] = "true"
		}
		if strings.Contains(host, "://") && !hasAny(props, iceio.GCSServiceHost, iceio.GCSEndpoint) {
			props[iceio.GCSServiceHost] = strings.TrimSuffix(host, "/") + "/storage/v1/"
		}
	case azureSchemes[u.Scheme]:
		host := u.Hostname()
		account, _, _ := strings.Cut(host, ".")
		if u.User == nil || u.User.Username() == "" || account == "" {
			return fmt.Errorf("lake: warehouse %s: an Azure location is %s://<container>@<account>.dfs.core.windows.net/<path>", redactLocation(wh), u.Scheme)
		}
		for k := range props {
			if strings.HasPrefix(k, iceio.ADLSConnectionStringPrefix) || strings.HasPrefix(k, iceio.ADLSSasTokenPrefix) ||
				k == iceio.ADLSSharedKeyAccountName || k == iceio.ADLSSharedKeyAccountKey || k == iceio.ADLSManagedIdentityEnabled {
				return nil
			}
		}
		switch cs, key, sas := get(EnvAzureConnString), get(EnvAzureKey), get(EnvAzureSASToken); {
		case cs != "":
			props[iceio.ADLSConnectionStringPrefix+account] = cs
		case key != "":
			if a := get(EnvAzureAccount); a != "" && a != account {
				return fmt.Errorf("lake: %s=%s but the warehouse %s is in account %s: the shared key %s belongs to one account",
					EnvAzureAccount, a, redactLocation(wh), account, EnvAzureKey)
			}
			props[iceio.ADLSSharedKeyAccountName], props[iceio.ADLSSharedKeyAccountKey] = account, key
		case sas != "":
			props[iceio.ADLSSasTokenPrefix+host] = strings.TrimPrefix(sas, "?")
		}
	}
	return nil
}

func hasAny(props map[string]string, keys ...string) bool {
	for _, k := range keys {
		if props[k] != "" {
			return true
		}
	}
	return false
}

// secretProperty reports whether the catalog or FileIO property key
// holds a credential: a key naming a secret, password, token,
// credential, connection string, SAS token or account or JSON key
// (s3.secret-access-key, s3.session-token, glue.secret-access-key,
// gcs.oauth2.token, gcs.jsonkey, adls.connection-string.<account>,
// adls.sas-token.<host>, adls.auth.shared-key.account.key, credential,
// token, rest.* passwords). Access key ids, regions, endpoints and
// gcs.oauth2.token-expires-at are not.
func secretProperty(key string) bool {
	k := strings.ToLower(key)
	if strings.HasSuffix(k, "token-expires-at") {
		return false
	}
	for _, w := range []string{"secret", "password", "token", "credential", "connection-string", "sas", "jsonkey"} {
		if strings.Contains(k, w) {
			return true
		}
	}
	return strings.HasSuffix(k, ".key") || k == "key"
}

// urlSecretRE matches the credential-bearing parts of URLs and
// connection strings that errors of the storage clients may quote: a
// SAS token's signature (Go's net/http quotes a failed request's URL with
// its query, the SAS included), pre-signed S3 and GCS signatures and
// tokens, and a connection string's AccountKey and SharedAccessSignature.
var urlSecretRE = regexp.MustCompile(`(?i)([?&](?:sig|x-amz-signature|x-amz-security-token|x-amz-credential|x-goog-signature|x-goog-credential|access_token|token)=)[^&\s"'\x60]+|((?:^|[;\s"'])(?:AccountKey|SharedAccessSignature)=)[^;\s"'\x60]+`)

// RedactText returns s with every credential removed that lakemirror
// knows of, each replaced by REDACTED: the values of props' secret
// properties (secretProperty) and of the secret environment variables (AWS_SECRET_ACCESS_KEY,
// AWS_SESSION_TOKEN, AZURE_STORAGE_KEY, AZURE_STORAGE_CONNECTION_STRING,
// AZURE_STORAGE_SAS_TOKEN, AZURE_CLIENT_SECRET, GOOGLE_OAUTH_ACCESS_TOKEN),
// where at least 6 characters long, and the signature and token
// parameters of URLs and the AccountKey and SharedAccessSignature of
// connection strings wherever they appear.
func RedactText(props map[string]string, s string) string {
	var secrets []string
	add := func(v string) {
		v = strings.TrimSpace(v)
		if len(v) >= minRedactedSecretLength {
			secrets = append(secrets, v)
		}
	}
	for k, v := range props {
		if secretProperty(k) {
			add(v)
		}
	}
	for _, k := range secretEnv {
		add(os.Getenv(k))
	}
	// longest first, so that a connection string goes before the key it holds
	slices.SortFunc(secrets, func(a, b string) int { return len(b) - len(a) })
	for _, v := range secrets {
		s = strings.ReplaceAll(s, v, redacted)
	}
	return urlSecretRE.ReplaceAllString(s, "${1}${2}"+redacted)
}

// redactError returns err with its text redacted (RedactText). When
// nothing was redacted it is err itself; otherwise a new error holding
// only the redacted text: it does not unwrap to err, whose text still
// holds the credential.
func redactError(props map[string]string, err error) error {
	if err == nil {
		return nil
	}
	if msg := err.Error(); RedactText(props, msg) != msg {
		return errors.New(RedactText(props, msg))
	}
	return err
}

// Redact returns s without the credentials of c's properties, of the
// environment and of URLs (RedactText over Properties; Props alone when
// Properties fails).
func (c CatalogConfig) Redact(s string) string {
	props, err := c.Properties()
	if err != nil {
		props = c.Props
	}
	return RedactText(props, s)
}
