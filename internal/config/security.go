package config

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl/oauth"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"
	"github.com/twmb/franz-go/pkg/sr"
)

// Environment variables of the connection security settings. Secrets
// (passwords, tokens, API keys) are best given this way: flags show in
// process listings.
const (
	EnvKafkaTLS            = "KAFKA_TLS"             // "true": TLS to the brokers
	EnvKafkaTLSCA          = "KAFKA_TLS_CA"          // PEM file of the CA(s) to trust (default: the system's)
	EnvKafkaTLSCert        = "KAFKA_TLS_CERT"        // PEM client certificate (mTLS)
	EnvKafkaTLSKey         = "KAFKA_TLS_KEY"         // PEM client key (mTLS)
	EnvKafkaTLSServerName  = "KAFKA_TLS_SERVER_NAME" // name to verify in the brokers' certificates
	EnvKafkaSASLMechanism  = "KAFKA_SASL_MECHANISM"  // PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER
	EnvKafkaSASLUser       = "KAFKA_SASL_USER"
	EnvKafkaSASLPassword   = "KAFKA_SASL_PASSWORD"
	EnvKafkaSASLToken      = "KAFKA_SASL_TOKEN" // OAUTHBEARER token
	EnvTemporalTLS         = "TEMPORAL_TLS"     // "true": TLS to the Temporal frontend
	EnvTemporalTLSCA       = "TEMPORAL_TLS_CA"
	EnvTemporalTLSCert     = "TEMPORAL_TLS_CERT" // mTLS client certificate (Temporal Cloud's mTLS auth)
	EnvTemporalTLSKey      = "TEMPORAL_TLS_KEY"
	EnvTemporalServerName  = "TEMPORAL_TLS_SERVER_NAME"
	EnvTemporalAPIKey      = "TEMPORAL_API_KEY" // API key (Temporal Cloud); implies TLS
	EnvRegistryUser        = "SCHEMA_REGISTRY_USER"
	EnvRegistryPassword    = "SCHEMA_REGISTRY_PASSWORD"
	EnvRegistryTLSCA       = "SCHEMA_REGISTRY_TLS_CA"
	EnvRegistryTLSCert     = "SCHEMA_REGISTRY_TLS_CERT"
	EnvRegistryTLSKey      = "SCHEMA_REGISTRY_TLS_KEY"
	EnvRegistryTLSInsecure = "SCHEMA_REGISTRY_TLS_SKIP_VERIFY" // "true": do not verify the registry's certificate (tests only)
)

// TLSFiles configure a TLS client from PEM files.
type TLSFiles struct {
	Enabled    bool
	CAFile     string // CAs to trust instead of the system pool; "" = the system's
	CertFile   string // client certificate for mutual TLS; with KeyFile
	KeyFile    string
	ServerName string // name to verify in the server certificate; "" = the dialled host
	// InsecureSkipVerify disables certificate verification. For tests
	// against self-signed servers only.
	InsecureSkipVerify bool
}

// Config returns the tls.Config, or nil when TLS is not enabled. Errors:
// unreadable or invalid PEM files, a certificate without its key (or the
// reverse).
func (t TLSFiles) Config() (*tls.Config, error) {
	if !t.Enabled {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: t.ServerName, InsecureSkipVerify: t.InsecureSkipVerify}
	if t.CAFile != "" {
		pem, err := os.ReadFile(t.CAFile)
		if err != nil {
			return nil, fmt.Errorf("config: TLS CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("config: TLS CA file %s holds no PEM certificate", t.CAFile)
		}
		cfg.RootCAs = pool
	}
	if (t.CertFile == "") != (t.KeyFile == "") {
		return nil, errors.New("config: a TLS client certificate needs its key and a key its certificate")
	}
	if t.CertFile != "" {
		pair, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
		if err != nil {
			return nil, fmt.Errorf("config: TLS client certificate: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

// KafkaSecurity is how the Kafka client authenticates and encrypts.
type KafkaSecurity struct {
	TLS           TLSFiles
	SASLMechanism string // "", PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER
	User          string
	Password      string
	Token         string // OAUTHBEARER: a token obtained out of band
}

// Opts returns the franz-go client options (TLS dialer, SASL mechanism)
// for these settings; none when neither is configured. Errors: TLSFiles'
// errors, an unknown mechanism, a mechanism without its credentials.
func (k KafkaSecurity) Opts() ([]kgo.Opt, error) {
	var opts []kgo.Opt
	cfg, err := k.TLS.Config()
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	if cfg != nil {
		opts = append(opts, kgo.DialTLSConfig(cfg))
	}
	switch m := strings.ToUpper(k.SASLMechanism); m {
	case "":
	case "PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512":
		if k.User == "" || k.Password == "" {
			return nil, fmt.Errorf("config: Kafka SASL %s needs a user and a password (%s, %s)", m, EnvKafkaSASLUser, EnvKafkaSASLPassword)
		}
		switch m {
		case "PLAIN":
			opts = append(opts, kgo.SASL(plain.Auth{User: k.User, Pass: k.Password}.AsMechanism()))
		case "SCRAM-SHA-256":
			opts = append(opts, kgo.SASL(scram.Auth{User: k.User, Pass: k.Password}.AsSha256Mechanism()))
		default:
			opts = append(opts, kgo.SASL(scram.Auth{User: k.User, Pass: k.Password}.AsSha512Mechanism()))
		}
	case "OAUTHBEARER":
		if k.Token == "" {
			return nil, fmt.Errorf("config: Kafka SASL OAUTHBEARER needs a token (%s)", EnvKafkaSASLToken)
		}
		opts = append(opts, kgo.SASL(oauth.Auth{Token: k.Token}.AsMechanism()))
	default:
		return nil, fmt.Errorf("config: unknown Kafka SASL mechanism %q (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)", k.SASLMechanism)
	}
	return opts, nil
}

// TemporalSecurity is how the Temporal client authenticates and encrypts.
type TemporalSecurity struct {
	TLS    TLSFiles
	APIKey string // Temporal Cloud API key; TLS is then on even if not asked for
}

// TLSConfig returns the Temporal connection's tls.Config (nil: plain
// gRPC). An API key turns TLS on with the system's CAs.
func (t TemporalSecurity) TLSConfig() (*tls.Config, error) {
	files := t.TLS
	if t.APIKey != "" {
		files.Enabled = true
	}
	cfg, err := files.Config()
	if err != nil {
		return nil, fmt.Errorf("temporal: %w", err)
	}
	return cfg, nil
}

// RegistrySecurity is how the schema registry client authenticates.
type RegistrySecurity struct {
	TLS      TLSFiles
	User     string // HTTP basic auth (Confluent Cloud: API key)
	Password string // (Confluent Cloud: API secret)
}

// Opts returns the schema registry client options for these settings.
// Errors: TLSFiles' errors.
func (r RegistrySecurity) Opts() ([]sr.ClientOpt, error) {
	var opts []sr.ClientOpt
	cfg, err := r.TLS.Config()
	if err != nil {
		return nil, fmt.Errorf("schema registry: %w", err)
	}
	if cfg != nil {
		opts = append(opts, sr.DialTLSConfig(cfg))
	}
	if r.User != "" {
		opts = append(opts, sr.BasicAuth(r.User, r.Password))
	}
	return opts, nil
}

// bindSecurity registers the security flags on fs.
func (s *Settings) bindSecurity(fs *flag.FlagSet) {
	k, t, r := &s.KafkaSecurity, &s.TemporalSecurity, &s.RegistrySecurity
	fs.BoolVar(&k.TLS.Enabled, "kafka-tls", envBool(EnvKafkaTLS), "TLS to the Kafka brokers (env "+EnvKafkaTLS+"; on by itself when a CA or client certificate is given)")
	fs.StringVar(&k.TLS.CAFile, "kafka-tls-ca", env(EnvKafkaTLSCA, ""), "PEM file of the CAs that sign the brokers' certificates (default: the system's) (env "+EnvKafkaTLSCA+")")
	fs.StringVar(&k.TLS.CertFile, "kafka-tls-cert", env(EnvKafkaTLSCert, ""), "PEM client certificate for mutual TLS (env "+EnvKafkaTLSCert+")")
	fs.StringVar(&k.TLS.KeyFile, "kafka-tls-key", env(EnvKafkaTLSKey, ""), "PEM client key for mutual TLS (env "+EnvKafkaTLSKey+")")
	fs.StringVar(&k.TLS.ServerName, "kafka-tls-server-name", env(EnvKafkaTLSServerName, ""), "name to verify in the brokers' certificates (env "+EnvKafkaTLSServerName+")")
	fs.StringVar(&k.SASLMechanism, "kafka-sasl-mechanism", env(EnvKafkaSASLMechanism, ""), "Kafka SASL: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 or OAUTHBEARER (env "+EnvKafkaSASLMechanism+")")
	fs.StringVar(&k.User, "kafka-sasl-user", env(EnvKafkaSASLUser, ""), "Kafka SASL user (env "+EnvKafkaSASLUser+")")
	fs.StringVar(&k.Password, "kafka-sasl-password", env(EnvKafkaSASLPassword, ""), "Kafka SASL password; prefer the environment (env "+EnvKafkaSASLPassword+")")
	fs.StringVar(&k.Token, "kafka-sasl-token", env(EnvKafkaSASLToken, ""), "Kafka SASL OAUTHBEARER token; prefer the environment (env "+EnvKafkaSASLToken+")")
	fs.BoolVar(&t.TLS.Enabled, "temporal-tls", envBool(EnvTemporalTLS), "TLS to the Temporal frontend (env "+EnvTemporalTLS+"; on by itself with a CA, client certificate or API key)")
	fs.StringVar(&t.TLS.CAFile, "temporal-tls-ca", env(EnvTemporalTLSCA, ""), "PEM file of the CAs that sign the Temporal frontend's certificate (env "+EnvTemporalTLSCA+")")
	fs.StringVar(&t.TLS.CertFile, "temporal-tls-cert", env(EnvTemporalTLSCert, ""), "PEM client certificate for mutual TLS to Temporal (env "+EnvTemporalTLSCert+")")
	fs.StringVar(&t.TLS.KeyFile, "temporal-tls-key", env(EnvTemporalTLSKey, ""), "PEM client key for mutual TLS to Temporal (env "+EnvTemporalTLSKey+")")
	fs.StringVar(&t.TLS.ServerName, "temporal-tls-server-name", env(EnvTemporalServerName, ""), "name to verify in the Temporal frontend's certificate (env "+EnvTemporalServerName+")")
	fs.StringVar(&t.APIKey, "temporal-api-key", env(EnvTemporalAPIKey, ""), "Temporal API key (Temporal Cloud); prefer the environment (env "+EnvTemporalAPIKey+")")
	fs.StringVar(&r.User, "schema-registry-user", env(EnvRegistryUser, ""), "worker only: schema registry basic-auth user (env "+EnvRegistryUser+")")
	fs.StringVar(&r.Password, "schema-registry-password", env(EnvRegistryPassword, ""), "worker only: schema registry basic-auth password; prefer the environment (env "+EnvRegistryPassword+")")
	fs.StringVar(&r.TLS.CAFile, "schema-registry-tls-ca", env(EnvRegistryTLSCA, ""), "worker only: PEM file of the CAs that sign the registry's certificate (env "+EnvRegistryTLSCA+")")
	fs.StringVar(&r.TLS.CertFile, "schema-registry-tls-cert", env(EnvRegistryTLSCert, ""), "worker only: PEM client certificate for mutual TLS to the registry (env "+EnvRegistryTLSCert+")")
	fs.StringVar(&r.TLS.KeyFile, "schema-registry-tls-key", env(EnvRegistryTLSKey, ""), "worker only: PEM client key for mutual TLS to the registry (env "+EnvRegistryTLSKey+")")
	fs.BoolVar(&r.TLS.InsecureSkipVerify, "schema-registry-tls-skip-verify", envBool(EnvRegistryTLSInsecure), "worker only: do not verify the registry's certificate (tests only) (env "+EnvRegistryTLSInsecure+")")
}

// finishSecurity turns TLS on wherever TLS files were given.
func (s *Settings) finishSecurity() {
	for _, f := range []*TLSFiles{&s.KafkaSecurity.TLS, &s.TemporalSecurity.TLS, &s.RegistrySecurity.TLS} {
		if f.CAFile != "" || f.CertFile != "" || f.InsecureSkipVerify {
			f.Enabled = true
		}
	}
}

func envBool(name string) bool {
	v := strings.ToLower(os.Getenv(name))
	return v == "1" || v == "true" || v == "yes"
}
