package webhook

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"syscall"
	"time"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/domain/callback"
)

// The member sends callbacks through cluster.Deliverer.
var _ cluster.Deliverer = (*Sender)(nil)

// The headers of a callback (SPEC §2.5, §14.3). SignatureHeader carries
// "sha256=<hex HMAC-SHA256 of TIMESTAMP.DELIVERY.BODY>" when a secret is set; the
// timestamp (Unix seconds, taken at each attempt) and the delivery id (the same for every
// retry of one callback) travel in their own headers, so a receiver verifies all three
// and drops a delivery it saw or one older than its window (5 minutes in the README).
const (
	SignatureHeader = "X-Sluice-Signature"
	DeliveryHeader  = "X-Sluice-Delivery"
	TimestampHeader = "X-Sluice-Timestamp"
)

// DefaultTimeout bounds one delivery attempt when Config.Timeout is zero.
const DefaultTimeout = cluster.CallbackTimeout

// maxDrain is how much of an answer's body is read so the connection can be reused; a
// receiver's body is never used, and a larger one is not worth the wait.
const maxDrain = 64 << 10

// Resolver looks up the addresses of a host; *net.Resolver implements it. network is
// "ip", "ip4" or "ip6".
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config configures a Sender.
type Config struct {
	// Secret is the HMAC key of the signature (--callback-secret); empty sends unsigned.
	Secret string
	// AllowHosts lifts the address policy for these host names, addresses or CIDR
	// prefixes (--callback-allow-host).
	AllowHosts []string
	// Timeout bounds one attempt, connect to last byte; zero means DefaultTimeout.
	Timeout time.Duration
	// Resolver resolves callback hosts; nil means net.DefaultResolver.
	Resolver Resolver
	// Now stamps X-Sluice-Timestamp; nil means time.Now.
	Now func() time.Time
}

// Sender delivers callbacks. It is safe for concurrent use.
type Sender struct {
	secret   []byte
	policy   callback.Policy
	timeout  time.Duration
	resolver Resolver
	now      func() time.Time
	client   *http.Client
}

// New builds a Sender. It refuses an allow-list entry that is neither a host name, an
// address nor a CIDR prefix, and a negative timeout.
func New(cfg Config) (*Sender, error) {
	policy, err := callback.NewPolicy(cfg.AllowHosts)
	if err != nil {
		return nil, err
	}
	if cfg.Timeout < 0 {
		return nil, fmt.Errorf("callback timeout %s is negative: give a positive duration or 0 for the default %s", cfg.Timeout, DefaultTimeout)
	}
	s := &Sender{
		secret:   []byte(cfg.Secret),
		policy:   policy,
		timeout:  cfg.Timeout,
		resolver: cfg.Resolver,
		now:      cfg.Now,
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.timeout == 0 {
		s.timeout = DefaultTimeout
	}
	if s.resolver == nil {
		s.resolver = net.DefaultResolver
	}
	s.client = &http.Client{
		Transport: &http.Transport{
			Proxy:                 nil, // see doc.go: a proxy would dial out of the policy's sight
			DialContext:           s.dial,
			ForceAttemptHTTP2:     true,
			MaxIdleConns:          16,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   s.timeout,
			ExpectContinueTimeout: time.Second,
		},
		// A redirect is the receiver's answer, not an instruction: following it would send
		// the signed body to a target nobody checked at submit. The 3xx status goes back to
		// the caller, which retries it like any other non-2xx, non-final answer.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	return s, nil
}

// Deliver POSTs body to rawURL and answers the HTTP status of the reply. An error wrapping
// cluster.ErrUndeliverable (and callback.ErrRefused) means the URL or one of the host's
// addresses is refused by policy and nothing was sent; any other error (resolution,
// connection, timeout) is worth retrying. Errors never carry the URL's credentials or
// query.
func (s *Sender) Deliver(ctx context.Context, delivery, rawURL string, body []byte) (int, error) {
	if _, err := s.policy.CheckURL(rawURL); err != nil {
		return 0, undeliverable(err)
	}
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rawURL, bytes.NewReader(body))
	if err != nil {
		return 0, undeliverable(errors.New("the callback url cannot be requested"))
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "sluice-callback")
	ts := strconv.FormatInt(s.now().Unix(), 10)
	req.Header.Set(DeliveryHeader, delivery)
	req.Header.Set(TimestampHeader, ts)
	if len(s.secret) > 0 {
		req.Header.Set(SignatureHeader, Signature(s.secret, ts, delivery, body))
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, scrub(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxDrain))
	return resp.StatusCode, nil
}

// CloseIdleConnections closes kept-alive connections (on shutdown).
func (s *Sender) CloseIdleConnections() { s.client.CloseIdleConnections() }

// Signature is the value of SignatureHeader under secret:
// "sha256=" + hex(HMAC-SHA256(secret, timestamp + "." + delivery + "." + body)). Signing
// the timestamp and the id is what stops a captured delivery from verifying forever.
func Signature(secret []byte, timestamp, delivery string, body []byte) string {
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(timestamp + "." + delivery + "."))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// dial resolves host once, refuses the connection when any answer is refused, and dials
// only the checked addresses — never the name, which could resolve differently.
func (s *Sender) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("callback address %q has no port: %w", addr, err)
	}
	if err := s.policy.CheckHost(host); err != nil {
		return nil, undeliverable(err)
	}
	addrs, err := s.resolve(ctx, network, host)
	if err != nil {
		return nil, err
	}
	// Every answer is checked before any is dialled: a refused one among allowed ones
	// means the name is pointed at a metadata service, whichever answer a dial would use.
	for _, a := range addrs {
		if err := s.policy.CheckAddr(host, a); err != nil {
			return nil, undeliverable(err)
		}
	}
	d := net.Dialer{
		// Checks again the exact address handed to the socket, so no later change to the
		// code above can open a connection the policy has not seen.
		Control: func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return undeliverable(&callback.RefusedError{Host: host, Reason: "dials an address that is not an IP address"})
			}
			if err := s.policy.CheckAddr(host, ap.Addr()); err != nil {
				return undeliverable(err)
			}
			return nil
		},
	}
	var errs []error
	for _, a := range addrs {
		conn, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

func (s *Sender) resolve(ctx context.Context, network, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	ipNet := "ip"
	switch network {
	case "tcp4":
		ipNet = "ip4"
	case "tcp6":
		ipNet = "ip6"
	}
	addrs, err := s.resolver.LookupNetIP(ctx, ipNet, host)
	if err != nil {
		return nil, fmt.Errorf("resolving callback host %q: %w", host, err)
	}
	if len(addrs) == 0 {
		return nil, fmt.Errorf("resolving callback host %q: no addresses", host)
	}
	return addrs, nil
}

// undeliverable marks a policy refusal so the caller drops the callback.
func undeliverable(err error) error {
	return fmt.Errorf("%w: %w", cluster.ErrUndeliverable, err)
}

// scrub removes userinfo and query from the URL that the http client puts in its errors;
// the chain below stays intact for errors.Is.
func scrub(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		if u, perr := url.Parse(ue.URL); perr == nil {
			u.User = nil
			u.RawQuery = ""
			u.Fragment = ""
			ue.URL = u.String()
		} else {
			ue.URL = "(callback url)"
		}
	}
	return err
}
