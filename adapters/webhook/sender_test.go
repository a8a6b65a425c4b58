package webhook_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/webhook"
	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/domain/callback"
)

// fakeResolver answers from a table and counts lookups.
type fakeResolver struct {
	mu      sync.Mutex
	answers map[string][]netip.Addr
	err     error
	lookups int
}

func (r *fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lookups++
	if r.err != nil {
		return nil, r.err
	}
	a, ok := r.answers[host]
	if !ok {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	return a, nil
}

func (r *fakeResolver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.lookups
}

func addrs(ss ...string) []netip.Addr {
	out := make([]netip.Addr, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParseAddr(s)
	}
	return out
}

// received is one request as the receiver saw it.
type received struct {
	method, path, host, contentType, signature string
	delivery, timestamp                        string
	hasSignature                               bool
	body                                       []byte
}

// receiver is a test endpoint answering status and recording what it got.
type receiver struct {
	srv  *httptest.Server
	mu   sync.Mutex
	got  []received
	port string
}

func newReceiver(t *testing.T, status int) *receiver {
	t.Helper()
	rc := &receiver{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, has := r.Header[webhook.SignatureHeader]
		rc.mu.Lock()
		rc.got = append(rc.got, received{
			method: r.Method, path: r.URL.Path, host: r.Host,
			contentType: r.Header.Get("Content-Type"), signature: r.Header.Get(webhook.SignatureHeader),
			delivery: r.Header.Get(webhook.DeliveryHeader), timestamp: r.Header.Get(webhook.TimestampHeader),
			hasSignature: has, body: b,
		})
		rc.mu.Unlock()
		if status >= 300 && status < 400 {
			w.Header().Set("Location", "/elsewhere")
		}
		w.WriteHeader(status)
	}))
	t.Cleanup(rc.srv.Close)
	u, err := url.Parse(rc.srv.URL)
	require.NoError(t, err)
	rc.port = u.Port()
	return rc
}

func (rc *receiver) requests() []received {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]received(nil), rc.got...)
}

func newSender(t *testing.T, cfg webhook.Config) *webhook.Sender {
	t.Helper()
	s, err := webhook.New(cfg)
	require.NoError(t, err)
	t.Cleanup(s.CloseIdleConnections)
	return s
}

func requireRefused(t *testing.T, err error) {
	t.Helper()
	require.Error(t, err)
	require.ErrorIs(t, err, cluster.ErrUndeliverable)
	require.ErrorIs(t, err, callback.ErrRefused)
}

func TestSignedPost(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, http.StatusOK)
	at := time.Unix(1_800_000_000, 0)
	s := newSender(t, webhook.Config{Secret: "s3cret", Now: func() time.Time { return at }})
	body := []byte(`{"run_id":"r1","status":"completed"}`)

	status, err := s.Deliver(context.Background(), "delivery-1", rc.srv.URL+"/hook", body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)

	got := rc.requests()
	require.Len(t, got, 1)
	require.Equal(t, http.MethodPost, got[0].method)
	require.Equal(t, "/hook", got[0].path)
	require.Equal(t, "application/json", got[0].contentType)
	require.Equal(t, body, got[0].body)
	require.Equal(t, "delivery-1", got[0].delivery)
	require.Equal(t, "1800000000", got[0].timestamp)
	// The signature covers timestamp.delivery.body (SPEC §14.3), not the body alone: a
	// captured body cannot be replayed under another timestamp or id.
	mac := hmac.New(sha256.New, []byte("s3cret"))
	mac.Write([]byte("1800000000.delivery-1."))
	mac.Write(body)
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	require.Equal(t, want, got[0].signature)
	require.Equal(t, want, webhook.Signature([]byte("s3cret"), "1800000000", "delivery-1", body))
}

func TestUnsignedWithoutSecret(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, http.StatusNoContent)
	s := newSender(t, webhook.Config{})
	status, err := s.Deliver(context.Background(), "delivery-1", rc.srv.URL, []byte(`{}`))
	require.NoError(t, err)
	require.Equal(t, http.StatusNoContent, status)
	got := rc.requests()
	require.Len(t, got, 1)
	require.False(t, got[0].hasSignature)
}

func TestStatusIsReturned(t *testing.T) {
	t.Parallel()
	for _, code := range []int{200, 201, 204, 400, 404, 408, 410, 429, 500, 502, 503} {
		rc := newReceiver(t, code)
		s := newSender(t, webhook.Config{})
		status, err := s.Deliver(context.Background(), "delivery-1", rc.srv.URL, []byte(`{}`))
		require.NoErrorf(t, err, "status %d", code)
		require.Equal(t, code, status)
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	t.Parallel()
	for _, code := range []int{301, 302, 307, 308} {
		rc := newReceiver(t, code)
		s := newSender(t, webhook.Config{Secret: "k"})
		status, err := s.Deliver(context.Background(), "delivery-1", rc.srv.URL+"/hook", []byte(`{}`))
		require.NoError(t, err)
		require.Equal(t, code, status)
		got := rc.requests()
		require.Len(t, got, 1, "the redirect target must not be requested")
		require.Equal(t, "/hook", got[0].path)
	}
}

func TestRefusedURLsSendNothing(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, http.StatusOK)
	res := &fakeResolver{answers: map[string][]netip.Addr{
		// Even pointed at the receiver, the metadata names are refused by name.
		"metadata.google.internal": addrs("127.0.0.1"),
		"metadata":                 addrs("127.0.0.1"),
	}}
	s := newSender(t, webhook.Config{Resolver: res})
	for _, u := range []string{
		"http://metadata.google.internal:" + rc.port + "/computeMetadata/v1/",
		"http://METADATA.google.internal.:" + rc.port + "/",
		"http://metadata:" + rc.port + "/",
		"http://169.254.169.254/latest/meta-data/",
		"http://169.254.0.1:" + rc.port + "/",
		"http://[fe80::1]:" + rc.port + "/",
		"http://[::ffff:169.254.169.254]/",
		"http://[fd00:ec2::254]/",
		"ftp://hooks.example.com/x",
		"hooks.example.com/x",
		"",
	} {
		_, err := s.Deliver(context.Background(), "delivery-1", u, []byte(`{}`))
		requireRefused(t, err)
	}
	require.Empty(t, rc.requests())
	require.Zero(t, res.count(), "a refused URL is refused before any lookup")
}

func TestResolvedLinkLocalIsRefused(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, http.StatusOK)
	res := &fakeResolver{answers: map[string][]netip.Addr{
		"v4.test":    addrs("169.254.169.254"),
		"v6.test":    addrs("fe80::abcd"),
		"mixed.test": addrs("127.0.0.1", "169.254.10.1"), // the allowed first answer does not help
		"nat64.test": addrs("64:ff9b::a9fe:a9fe"),
		"alibaba":    addrs("100.100.100.200"),
	}}
	s := newSender(t, webhook.Config{Resolver: res})
	for host := range res.answers {
		_, err := s.Deliver(context.Background(), "delivery-1", "http://"+host+":"+rc.port+"/", []byte(`{}`))
		requireRefused(t, err)
		require.Contains(t, err.Error(), host)
	}
	require.Empty(t, rc.requests())
}

func TestResolvedPrivateAndLoopbackAreAllowed(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, http.StatusAccepted)
	res := &fakeResolver{answers: map[string][]netip.Addr{"hooks.test": addrs("127.0.0.1")}}
	s := newSender(t, webhook.Config{Resolver: res})
	status, err := s.Deliver(context.Background(), "delivery-1", "http://hooks.test:"+rc.port+"/x", []byte(`{}`))
	require.NoError(t, err)
	require.Equal(t, http.StatusAccepted, status)
	got := rc.requests()
	require.Len(t, got, 1)
	require.Equal(t, "hooks.test:"+rc.port, got[0].host, "the Host header keeps the name")
	require.Equal(t, 1, res.count(), "the name is resolved once: the checked answer is the dialled one")
}

func TestEachDeliveryChecksTheCurrentAnswer(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, http.StatusOK)
	res := &fakeResolver{answers: map[string][]netip.Addr{"rebind.test": addrs("127.0.0.1")}}
	s := newSender(t, webhook.Config{Resolver: res})
	u := "http://rebind.test:" + rc.port + "/"
	status, err := s.Deliver(context.Background(), "delivery-1", u, []byte(`{}`))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)

	s.CloseIdleConnections() // a kept-alive connection was checked when dialled; force a new dial
	res.mu.Lock()
	res.answers["rebind.test"] = addrs("169.254.169.254")
	res.mu.Unlock()
	_, err = s.Deliver(context.Background(), "delivery-1", u, []byte(`{}`))
	requireRefused(t, err)
	require.Len(t, rc.requests(), 1)
}

func TestAllowHostsLiftTheRefusal(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, http.StatusOK)
	res := &fakeResolver{answers: map[string][]netip.Addr{"metadata.google.internal": addrs("127.0.0.1")}}
	s := newSender(t, webhook.Config{Resolver: res, AllowHosts: []string{"metadata.google.internal"}})
	status, err := s.Deliver(context.Background(), "delivery-1", "http://metadata.google.internal:"+rc.port+"/", []byte(`{}`))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, status)
	require.Len(t, rc.requests(), 1)

	// Another metadata name stays refused.
	_, err = s.Deliver(context.Background(), "delivery-1", "http://metadata:"+rc.port+"/", []byte(`{}`))
	requireRefused(t, err)
}

func TestTimeout(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	s := newSender(t, webhook.Config{Timeout: 100 * time.Millisecond})
	// The server never answers on its own, so returning at all shows the timeout ended it.
	_, err := s.Deliver(context.Background(), "delivery-1", srv.URL, []byte(`{}`))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.NotErrorIs(t, err, cluster.ErrUndeliverable, "a timeout is retried")
}

func TestCallerCancellation(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, http.StatusOK)
	s := newSender(t, webhook.Config{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := s.Deliver(ctx, "delivery-1", rc.srv.URL, []byte(`{}`))
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, rc.requests())
}

func TestResolutionFailureIsRetryable(t *testing.T) {
	t.Parallel()
	for name, res := range map[string]*fakeResolver{
		"not found": {answers: map[string][]netip.Addr{}},
		"no answer": {answers: map[string][]netip.Addr{"hooks.test": nil}},
		"failing":   {err: errors.New("resolver down")},
	} {
		s := newSender(t, webhook.Config{Resolver: res})
		_, err := s.Deliver(context.Background(), "delivery-1", "http://hooks.test:9/", []byte(`{}`))
		require.Errorf(t, err, name)
		require.NotErrorIsf(t, err, cluster.ErrUndeliverable, name)
		require.Containsf(t, err.Error(), "hooks.test", name)
	}
}

func TestErrorsCarryNoCredentials(t *testing.T) {
	t.Parallel()
	s := newSender(t, webhook.Config{Resolver: &fakeResolver{err: errors.New("resolver down")}})
	_, err := s.Deliver(context.Background(), "delivery-1", "http://alice:pa55word@hooks.test:9/x?token=t0ps3cret", []byte(`{}`))
	require.Error(t, err)
	require.NotContains(t, err.Error(), "pa55word")
	require.NotContains(t, err.Error(), "alice")
	require.NotContains(t, err.Error(), "t0ps3cret")

	_, err = s.Deliver(context.Background(), "delivery-1", "http://alice:pa55word@169.254.169.254/?token=t0ps3cret", []byte(`{}`))
	requireRefused(t, err)
	require.NotContains(t, err.Error(), "pa55word")
	require.NotContains(t, err.Error(), "t0ps3cret")
}

func TestNewRefusesBadConfig(t *testing.T) {
	t.Parallel()
	_, err := webhook.New(webhook.Config{AllowHosts: []string{"http://hooks.example.com/x"}})
	require.ErrorContains(t, err, "--callback-allow-host")
	_, err = webhook.New(webhook.Config{AllowHosts: []string{"10.0.0.0/99"}})
	require.ErrorContains(t, err, "--callback-allow-host")
	_, err = webhook.New(webhook.Config{Timeout: -time.Second})
	require.ErrorContains(t, err, "timeout")
}

func TestSignatureIsHexHMAC(t *testing.T) {
	t.Parallel()
	// 32 bytes of HMAC-SHA256, hex-encoded, behind the scheme name.
	got := webhook.Signature([]byte("Jefe"), "what do ya", "want for", []byte("nothing?"))
	require.Len(t, got, len("sha256=")+64)
	require.True(t, strings.HasPrefix(got, "sha256="))
}
