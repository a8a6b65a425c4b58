package kafka

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/sasl"
	"github.com/twmb/franz-go/pkg/sasl/plain"
	"github.com/twmb/franz-go/pkg/sasl/scram"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// SASL mechanisms of the sasl_mechanism key.
const (
	SASLPlain       = "PLAIN"
	SASLScramSHA256 = "SCRAM-SHA-256"
	SASLScramSHA512 = "SCRAM-SHA-512"
)

// securityFields are the TLS and SASL keys of both roles. They are flat keys (not a
// block) so that each one is validated, documented and redacted on its own.
func securityFields() []pipeline.FieldSpec {
	return []pipeline.FieldSpec{
		{Name: "tls", Type: pipeline.FieldBool, Default: false,
			Description: "Connect to the brokers over TLS (verified against the system roots, or tls_ca_pem)."},
		{Name: "tls_ca_pem", Type: pipeline.FieldString,
			Description: "PEM certificates of the CAs that sign the brokers' certificates, instead of the system roots; e.g. ${env:KAFKA_CA} or ${secret:NAME}."},
		{Name: "tls_server_name", Type: pipeline.FieldString,
			Description: "Host name the brokers' certificates must name; empty: each broker's own host."},
		{Name: "tls_insecure_skip_verify", Type: pipeline.FieldBool, Default: false,
			Description: "Accept any broker certificate (tests only: it gives up the protection TLS is for)."},
		{Name: "sasl_mechanism", Type: pipeline.FieldString, Enum: []string{SASLPlain, SASLScramSHA256, SASLScramSHA512},
			Description: "SASL authentication: PLAIN (send it over tls only), SCRAM-SHA-256 or SCRAM-SHA-512; with sasl_username and sasl_password. Empty: none."},
		{Name: "sasl_username", Type: pipeline.FieldString,
			Description: "SASL user name."},
		{Name: "sasl_password", Type: pipeline.FieldString, Secret: true,
			Description: "SASL password; use ${secret:NAME}."},
	}
}

// security is how the client connects: TLS (nil: plaintext) and a SASL mechanism (nil:
// none).
type security struct {
	tls  *tls.Config
	sasl sasl.Mechanism
	mech string // the SASL mechanism's name, and the user it logs in as, for errors
	user string
}

// checkSecurity reports every inconsistent TLS/SASL key, each at its own path. Values
// holding directives are left for the run, where they are resolved and checked again.
func checkSecurity(c map[string]any, path string) pipeline.Errors {
	var errs pipeline.Errors
	add := func(key, format string, args ...any) {
		errs = append(errs, pipeline.FieldError{Path: pipeline.Join(path, key), Message: fmt.Sprintf(format, args...)})
	}
	for _, e := range securityProblems(c) {
		add(e.key, "%s", e.msg)
	}
	return errs
}

// problem is one inconsistency of the security keys.
type problem struct{ key, msg string }

func securityProblems(c map[string]any) []problem {
	var out []problem
	str := func(k string) string { s, _ := cfg.String(c, k, ""); return s }
	on, _ := cfg.Bool(c, "tls", false)
	skip, _ := cfg.Bool(c, "tls_insecure_skip_verify", false)
	if !on {
		for _, k := range []string{"tls_ca_pem", "tls_server_name"} {
			if str(k) != "" {
				out = append(out, problem{k, "is set but tls is false; set tls: true"})
			}
		}
		if skip {
			out = append(out, problem{"tls_insecure_skip_verify", "is set but tls is false; set tls: true"})
		}
	}
	if pem := str("tls_ca_pem"); pem != "" && !strings.Contains(pem, "${") {
		if !x509.NewCertPool().AppendCertsFromPEM([]byte(pem)) {
			out = append(out, problem{"tls_ca_pem", "holds no PEM certificate (-----BEGIN CERTIFICATE-----)"})
		}
	}
	mech, user, pass := str("sasl_mechanism"), str("sasl_username"), str("sasl_password")
	switch mech {
	case "", SASLPlain, SASLScramSHA256, SASLScramSHA512:
	default:
		if !strings.Contains(mech, "${") {
			out = append(out, problem{"sasl_mechanism", fmt.Sprintf("must be one of PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, not %q", mech)})
		}
	}
	switch {
	case mech == "" && (user != "" || pass != ""):
		out = append(out, problem{"sasl_mechanism", "must be set (PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512) to use sasl_username / sasl_password"})
	case mech != "":
		if user == "" {
			out = append(out, problem{"sasl_username", "must be set with sasl_mechanism " + mech})
		}
		if pass == "" {
			out = append(out, problem{"sasl_password", "must be set with sasl_mechanism " + mech + " (use ${secret:NAME})"})
		}
	}
	return out
}

// securityOf reads the resolved TLS and SASL keys; the error names the first key at fault.
func securityOf(c map[string]any) (security, error) {
	var s security
	for _, k := range []string{"tls_ca_pem", "tls_server_name", "sasl_mechanism", "sasl_username", "sasl_password"} {
		if _, err := cfg.String(c, k, ""); err != nil {
			return s, err
		}
	}
	for _, k := range []string{"tls", "tls_insecure_skip_verify"} {
		if _, err := cfg.Bool(c, k, false); err != nil {
			return s, err
		}
	}
	if p := securityProblems(c); len(p) > 0 {
		return s, fmt.Errorf("config key %q %s", p[0].key, p[0].msg)
	}
	str := func(k string) string { v, _ := cfg.String(c, k, ""); return v }
	if on, _ := cfg.Bool(c, "tls", false); on {
		skip, _ := cfg.Bool(c, "tls_insecure_skip_verify", false)
		s.tls = &tls.Config{MinVersion: tls.VersionTLS12, ServerName: str("tls_server_name"), InsecureSkipVerify: skip} //nolint:gosec // an explicit, documented opt-in
		if pem := str("tls_ca_pem"); pem != "" {
			s.tls.RootCAs = x509.NewCertPool()
			s.tls.RootCAs.AppendCertsFromPEM([]byte(pem))
		}
	}
	user, pass := str("sasl_username"), str("sasl_password")
	s.mech, s.user = str("sasl_mechanism"), user
	switch s.mech {
	case "":
	case SASLPlain:
		s.sasl = plain.Auth{User: user, Pass: pass}.AsMechanism()
	case SASLScramSHA256:
		s.sasl = scram.Auth{User: user, Pass: pass}.AsSha256Mechanism()
	case SASLScramSHA512:
		s.sasl = scram.Auth{User: user, Pass: pass}.AsSha512Mechanism()
	}
	return s, nil
}

// explain says what to check when an open with SASL fails the way a refused login does:
// a broker answers SASL_AUTHENTICATION_FAILED, and some simply close the connection.
func (s security) explain(err error) error {
	if s.sasl == nil {
		return err
	}
	if errors.Is(err, kerr.SaslAuthenticationFailed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) {
		return fmt.Errorf("%w (SASL %s login as %q refused or cut off: check sasl_username / sasl_password)", err, s.mech, s.user)
	}
	return err
}

// opts are the client options of s (SASL; TLS is done by the dialer, which must stay the
// one dialing so the dial policy sees every connection).
func (s security) opts() []kgo.Opt {
	if s.sasl == nil {
		return nil
	}
	return []kgo.Opt{kgo.SASL(s.sasl)}
}

// handshake wraps a dialed connection in TLS when s asks for it. A certificate the
// client refuses will be refused again: the error is marked final for the dialer.
func (s security) handshake(ctx context.Context, conn net.Conn, addr string) (net.Conn, error) {
	if s.tls == nil {
		return conn, nil
	}
	c := s.tls.Clone()
	if c.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		c.ServerName = host
	}
	tc := tls.Client(conn, c)
	if err := tc.HandshakeContext(ctx); err != nil {
		conn.Close()
		err = fmt.Errorf("TLS handshake with broker %s: %w", addr, err)
		if isCertificateError(err) {
			err = &tlsRefusal{err: err}
		}
		return nil, err
	}
	return tc, nil
}

// tlsRefusal is a handshake the client itself refused (the certificate did not verify):
// retrying cannot help, so the open ends at once with it.
type tlsRefusal struct{ err error }

func (e *tlsRefusal) Error() string {
	return e.err.Error() + "; check tls_ca_pem / tls_server_name"
}
func (e *tlsRefusal) Unwrap() error { return e.err }

func isCertificateError(err error) bool {
	var ve *tls.CertificateVerificationError
	var ue x509.UnknownAuthorityError
	var he x509.HostnameError
	var ce x509.CertificateInvalidError
	return errors.As(err, &ve) || errors.As(err, &ue) || errors.As(err, &he) || errors.As(err, &ce)
}
