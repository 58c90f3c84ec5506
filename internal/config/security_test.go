package config

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakemirror/lakemirror/internal/kafka"
)

// testPKI is a CA with a server certificate for 127.0.0.1 and a client
// certificate, as PEM files in a temp dir.
type testPKI struct {
	dir                       string
	caFile, certFile, keyFile string // client
	server                    tls.Certificate
	pool                      *x509.CertPool
	otherCAFile               string // a CA that signed nothing here
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	newKey := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	mkCA := func(cn string) (*x509.Certificate, *ecdsa.PrivateKey, []byte) {
		k := newKey()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: cn}, NotBefore: time.Now().Add(-time.Hour),
			NotAfter: time.Now().Add(time.Hour), IsCA: true, KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
		if err != nil {
			t.Fatal(err)
		}
		c, _ := x509.ParseCertificate(der)
		return c, k, der
	}
	ca, caKey, caDER := mkCA("lakemirror test CA")
	_, _, otherDER := mkCA("another CA")
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage) ([]byte, *ecdsa.PrivateKey) {
		k := newKey()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn}, NotBefore: time.Now().Add(-time.Hour),
			NotAfter: time.Now().Add(time.Hour), ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, k
	}
	srvDER, srvKey := leaf(2, "broker", x509.ExtKeyUsageServerAuth)
	cliDER, cliKey := leaf(3, "lakemirror", x509.ExtKeyUsageClientAuth)
	srvKeyDER, _ := x509.MarshalECPrivateKey(srvKey)
	cliKeyDER, _ := x509.MarshalECPrivateKey(cliKey)
	server, err := tls.X509KeyPair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srvDER}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: srvKeyDER}))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return testPKI{dir: dir, caFile: write("ca.pem", "CERTIFICATE", caDER), certFile: write("client.pem", "CERTIFICATE", cliDER),
		keyFile: write("client-key.pem", "EC PRIVATE KEY", cliKeyDER), server: server, pool: pool,
		otherCAFile: write("other-ca.pem", "CERTIFICATE", otherDER)}
}

// Against a broker that requires mutual TLS and SASL (kfake), the Kafka
// settings connect, produce and fetch with the right CA, client
// certificate and SCRAM or PLAIN credentials, and fail with a wrong
// password, an untrusted CA, no client certificate or no TLS.
func TestKafkaTLSAndSASL(t *testing.T) {
	pki := newTestPKI(t)
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.EnableSASL(),
		kfake.Superuser("SCRAM-SHA-256", "lm", "s3cret"), kfake.Superuser("PLAIN", "plainuser", "pl41n"),
		kfake.TLS(&tls.Config{Certificates: []tls.Certificate{pki.server}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pki.pool}))
	if err != nil {
		t.Fatal(err)
	}
	defer cluster.Close()
	good := TLSFiles{Enabled: true, CAFile: pki.caFile, CertFile: pki.certFile, KeyFile: pki.keyFile}
	try := func(sec KafkaSecurity) error {
		opts, err := sec.Opts()
		if err != nil {
			return err
		}
		kc, err := kafka.NewClient(cluster.ListenAddrs(), append(opts, kgo.RequestRetries(0), kgo.RetryTimeout(2*time.Second))...)
		if err != nil {
			return err
		}
		defer kc.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		topic := "secure-" + strings.ToLower(sec.SASLMechanism)
		if err := kc.CreateTopic(ctx, topic, 1); err != nil {
			return err
		}
		if err := kc.Produce(ctx, &kgo.Record{Topic: topic, Key: []byte("k"), Value: []byte("v")}); err != nil {
			return err
		}
		recs, err := kc.Fetch(ctx, topic, []kafka.Range{{Partition: 0, From: 0, To: 1}})
		if err != nil {
			return err
		}
		if len(recs) != 1 || string(recs[0].Value) != "v" {
			t.Fatalf("fetched %d records", len(recs))
		}
		return nil
	}
	for _, ok := range []KafkaSecurity{
		{TLS: good, SASLMechanism: "SCRAM-SHA-256", User: "lm", Password: "s3cret"},
		{TLS: good, SASLMechanism: "plain", User: "plainuser", Password: "pl41n"},
	} {
		if err := try(ok); err != nil {
			t.Fatalf("%s: %v", ok.SASLMechanism, err)
		}
	}
	noCert := good
	noCert.CertFile, noCert.KeyFile = "", ""
	otherCA := good
	otherCA.CAFile = pki.otherCAFile
	for name, bad := range map[string]KafkaSecurity{
		"wrong password": {TLS: good, SASLMechanism: "SCRAM-SHA-256", User: "lm", Password: "guess"},
		"no SASL":        {TLS: good},
		"no client cert": {TLS: noCert, SASLMechanism: "SCRAM-SHA-256", User: "lm", Password: "s3cret"},
		"untrusted CA":   {TLS: otherCA, SASLMechanism: "SCRAM-SHA-256", User: "lm", Password: "s3cret"},
		"no TLS":         {SASLMechanism: "SCRAM-SHA-256", User: "lm", Password: "s3cret"},
	} {
		if err := try(bad); err == nil {
			t.Errorf("%s: connected", name)
		}
	}
}

func TestSecuritySettingsErrors(t *testing.T) {
	pki := newTestPKI(t)
	for name, sec := range map[string]KafkaSecurity{
		"unknown mechanism": {SASLMechanism: "KERBEROS"},
		"no password":       {SASLMechanism: "PLAIN", User: "u"},
		"no token":          {SASLMechanism: "OAUTHBEARER"},
		"cert without key":  {TLS: TLSFiles{Enabled: true, CertFile: pki.certFile}},
		"missing CA file":   {TLS: TLSFiles{Enabled: true, CAFile: filepath.Join(pki.dir, "nope.pem")}},
		"CA file not PEM":   {TLS: TLSFiles{Enabled: true, CAFile: pki.keyFile + ".missing"}},
		"key is not a cert": {TLS: TLSFiles{Enabled: true, CertFile: pki.keyFile, KeyFile: pki.keyFile}},
	} {
		if _, err := sec.Opts(); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if opts, err := (KafkaSecurity{}).Opts(); err != nil || len(opts) != 0 {
		t.Fatalf("no security settings: %d options, %v", len(opts), err)
	}
	cfg, err := (TemporalSecurity{APIKey: "k"}).TLSConfig()
	if err != nil || cfg == nil {
		t.Fatalf("an API key must turn TLS on: %v, %v", cfg, err)
	}
	if cfg, err := (TemporalSecurity{}).TLSConfig(); err != nil || cfg != nil {
		t.Fatalf("plain Temporal: %v, %v", cfg, err)
	}
}
