package kafka_test

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
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/adapters/connectors/kafka"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// selfSigned is a CA-less certificate for 127.0.0.1 and its PEM, for a TLS kfake.
func selfSigned(t *testing.T) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "kfake"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, DNSNames: []string{"localhost"},
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA: true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	require.NoError(t, err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// secureCluster is a kfake over TLS with SASL users of every mechanism.
func secureCluster(t *testing.T) (brokers []string, caPEM string) {
	t.Helper()
	cert, caPEM := selfSigned(t)
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "t"),
		kfake.TLS(&tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}),
		kfake.EnableSASL(),
		kfake.Superuser(kafka.SASLPlain, "plain-user", "plain-pass"),
		kfake.Superuser(kafka.SASLScramSHA256, "scram256-user", "scram256-pass"),
		kfake.Superuser(kafka.SASLScramSHA512, "scram512-user", "scram512-pass"))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c.ListenAddrs(), caPEM
}

func TestTLSAndEverySASLMechanismWriteAndRead(t *testing.T) {
	t.Parallel()
	brokers, ca := secureCluster(t)
	users := map[string][2]string{
		kafka.SASLPlain:       {"plain-user", "plain-pass"},
		kafka.SASLScramSHA256: {"scram256-user", "scram256-pass"},
		kafka.SASLScramSHA512: {"scram512-user", "scram512-pass"},
	}
	want := 0
	for mech, up := range users {
		cfg := map[string]any{"brokers": brokers, "topic": "t", "tls": true, "tls_ca_pem": ca,
			"sasl_mechanism": mech, "sasl_username": up[0], "sasl_password": up[1], "timeout_secs": int64(10)}
		require.Empty(t, kafka.New().Spec().Check(pipeline.RoleSink, cfg, "p"), mech)
		require.NoError(t, conntest.SinkRun(t, kafka.New(), execute.WriteRequest{Config: cfg},
			&execute.Page{Columns: []string{"id"}, Rows: [][]any{{int64(1)}, {int64(2)}}}), mech)
		want += 2
		pages := conntest.Read(t, kafka.New(), execute.ReadRequest{Config: cfg, BatchSize: 100})
		require.Len(t, conntest.Ints(t, pages, "id"), want, "%s reads every message written so far", mech)
	}
}

func TestWrongPasswordFailsAtOnceNamingSASL(t *testing.T) {
	t.Parallel()
	brokers, ca := secureCluster(t)
	cfg := map[string]any{"brokers": brokers, "topic": "t", "tls": true, "tls_ca_pem": ca,
		"sasl_mechanism": kafka.SASLScramSHA256, "sasl_username": "scram256-user", "sasl_password": "wrong-password-42"}
	_, err := kafka.New().OpenSource(context.Background(), execute.ReadRequest{Config: cfg, BatchSize: 10})
	require.Error(t, err)
	require.Contains(t, err.Error(), "kafka: brokers [")
	require.Contains(t, err.Error(), "SASL")
	require.NotContains(t, err.Error(), "wrong-password-42")
	require.False(t, execute.IsTransient(err), "a refused credential is not worth a retry: %v", err)
}

func TestUntrustedCertificateFailsNamingTheBrokerAndTheKey(t *testing.T) {
	t.Parallel()
	brokers, _ := secureCluster(t)
	_, otherCA := selfSigned(t)
	cfg := map[string]any{"brokers": brokers, "topic": "t", "tls": true, "tls_ca_pem": otherCA,
		"sasl_mechanism": kafka.SASLPlain, "sasl_username": "plain-user", "sasl_password": "plain-pass"}
	_, err := kafka.New().OpenSink(context.Background(), execute.WriteRequest{Config: cfg})
	require.Error(t, err)
	require.Contains(t, err.Error(), "TLS handshake with broker "+brokers[0])
	require.Contains(t, err.Error(), "tls_ca_pem")
	require.False(t, execute.IsTransient(err), "%v", err)
}

func TestSecurityKeysAreCheckedEachAtItsPath(t *testing.T) {
	t.Parallel()
	base := func(kv ...any) map[string]any {
		c := map[string]any{"brokers": []string{"h:9092"}, "topic": "t"}
		for i := 0; i < len(kv); i += 2 {
			c[kv[i].(string)] = kv[i+1]
		}
		return c
	}
	cases := []struct {
		cfg  map[string]any
		key  string
		want string
	}{
		{base("sasl_mechanism", "GSSAPI", "sasl_username", "u", "sasl_password", "p"), "sasl_mechanism", "must be one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512"},
		{base("sasl_mechanism", kafka.SASLPlain, "sasl_password", "p"), "sasl_username", "must be set with sasl_mechanism PLAIN"},
		{base("sasl_mechanism", kafka.SASLScramSHA512, "sasl_username", "u"), "sasl_password", "${secret:NAME}"},
		{base("sasl_username", "u", "sasl_password", "p"), "sasl_mechanism", "must be set"},
		{base("tls_ca_pem", "x"), "tls_ca_pem", "tls is false"},
		{base("tls", true, "tls_ca_pem", "not a pem"), "tls_ca_pem", "no PEM certificate"},
	}
	spec := kafka.New().Spec()
	for _, tc := range cases {
		errs := spec.Check(pipeline.RoleSource, tc.cfg, "pipeline.source.config")
		require.NotEmpty(t, errs, "%v", tc.cfg)
		require.Equal(t, "pipeline.source.config."+tc.key, errs[0].Path, "%v", tc.cfg)
		require.Contains(t, errs[0].Message, tc.want)
		if tc.key != "sasl_mechanism" || tc.want == "must be set" {
			_, err := kafka.New().OpenSource(context.Background(), execute.ReadRequest{Config: tc.cfg})
			require.ErrorContains(t, err, `"`+tc.key+`"`, "the run checks the resolved keys the same way")
		}
	}
	// A password left for the run to resolve is not judged at submit.
	require.Empty(t, spec.Check(pipeline.RoleSource, base("sasl_mechanism", kafka.SASLPlain, "sasl_username", "u",
		"sasl_password", "${secret:kafka}"), "p"))
}
