package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/domain/callback"
)

// outbound applies the callback host policy (SPEC §2.5) to the URLs connectors fetch in
// serve (§1.4): a submitted config must not reach cloud metadata endpoints either. The
// URL is checked before the request (scheme, refused names and literals) and every
// resolved address again at dial time, so a name that resolves to a link-local address —
// or is re-pointed there after the check — is refused too.
type outbound struct {
	policy   callback.Policy
	resolver *net.Resolver
	dialer   *net.Dialer
}

func newOutbound(allowHosts []string) (*outbound, error) {
	p, err := callback.NewPolicy(allowHosts)
	if err != nil {
		return nil, err
	}
	return &outbound{policy: p, resolver: net.DefaultResolver, dialer: &net.Dialer{Timeout: 30 * time.Second}}, nil
}

// checkURL is the connectors' URL check (builtin.WithURLCheck).
func (o *outbound) checkURL(_ context.Context, u *url.URL) error {
	_, err := o.policy.CheckURL(u.String())
	return err
}

// client is the HTTP client connectors fetch with. It never uses a proxy: a proxy would
// dial the target out of the policy's sight.
func (o *outbound) client() *http.Client {
	return &http.Client{Transport: &http.Transport{
		Proxy:                 nil,
		DialContext:           o.dial,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: time.Minute,
		ExpectContinueTimeout: time.Second,
	}}
}

// dial resolves addr's host, drops the addresses the policy refuses and dials the first
// allowed one that answers.
func (o *outbound) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("port %q: %w", portText, err)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = o.resolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, err
	}
	var errs []error
	for _, a := range addrs {
		if err := o.policy.CheckAddr(host, a); err != nil {
			errs = append(errs, err)
			continue
		}
		conn, err := o.dialer.DialContext(ctx, network, netip.AddrPortFrom(a, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("host %q has no addresses", host)
	}
	return nil, errors.Join(errs...)
}
