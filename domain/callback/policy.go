package callback

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"slices"
	"strings"
)

// ErrRefused is wrapped by every refusal of the policy.
var ErrRefused = errors.New("callback address refused")

// RefusedError says why a callback URL or address is refused. Its message names the
// host (never the URL: a URL may carry credentials) and what to change.
type RefusedError struct {
	Host   string
	Reason string
}

func (e *RefusedError) Error() string {
	if e.Host == "" {
		return e.Reason
	}
	return fmt.Sprintf("callback host %q: %s", e.Host, e.Reason)
}

// Unwrap makes errors.Is(err, ErrRefused) true.
func (e *RefusedError) Unwrap() error { return ErrRefused }

// metadataHosts are the names cloud providers give their instance metadata services.
// They are refused by name because some resolve to addresses outside the link-local
// range (GCE answers metadata.google.internal from a private resolver; Alibaba and
// Tencent use their own names).
var metadataHosts = []string{
	"metadata",
	"metadata.google.internal",
	"metadata.goog",
	"metadata.azure.com",
	"metadata.azure.internal",
	"instance-data",
	"instance-data.ec2.internal",
	"metadata.tencentyun.com",
	"metadata.packet.net",
	"metadata.platformequinix.com",
	"metadata.oraclecloud.com",
}

// metadataAddrs are metadata endpoints outside the link-local ranges: AWS's IPv6 endpoint
// sits in the private fd00::/8 range and Alibaba's in the shared 100.64.0.0/10 range,
// both of which are otherwise allowed.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("fd00:ec2::254"),
	netip.MustParseAddr("100.100.100.200"),
}

var (
	linkLocal4 = netip.MustParsePrefix("169.254.0.0/16")
	linkLocal6 = netip.MustParsePrefix("fe80::/10")
	// nat64 is the well-known NAT64 prefix: 64:ff9b::a9fe:a9fe reaches 169.254.169.254
	// through a translator, so the embedded IPv4 address is what counts.
	nat64 = netip.MustParsePrefix("64:ff9b::/96")
)

// Policy decides which callback targets are allowed. The zero value refuses the
// link-local ranges and metadata endpoints and allows everything else.
type Policy struct {
	hosts    []string       // normalized host names and address literals, exact match
	prefixes []netip.Prefix // CIDR entries
}

// NewPolicy builds a policy whose allow-list is allowHosts: host names, IP addresses or
// CIDR prefixes (the values of --callback-allow-host). An entry that is neither a name
// nor an address nor a prefix is an error naming it.
func NewPolicy(allowHosts []string) (Policy, error) {
	var p Policy
	for _, h := range allowHosts {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if strings.Contains(h, "/") {
			pre, err := netip.ParsePrefix(h)
			if err != nil {
				return Policy{}, fmt.Errorf("--callback-allow-host %q is not a host name, an IP address or a CIDR prefix", h)
			}
			p.prefixes = append(p.prefixes, pre.Masked())
			continue
		}
		if strings.ContainsAny(h, " :/@?#") && !isAddr(h) {
			return Policy{}, fmt.Errorf("--callback-allow-host %q is not a host name, an IP address or a CIDR prefix", h)
		}
		p.hosts = append(p.hosts, normalizeHost(h))
	}
	return p, nil
}

func isAddr(s string) bool {
	_, err := netip.ParseAddr(strings.Trim(s, "[]"))
	return err == nil
}

// normalizeHost lowercases a name, drops a trailing root dot and the brackets of an IPv6
// literal, and writes addresses in their canonical form, so "METADATA.google.internal."
// and "[FE80::1]" match their listed forms.
func normalizeHost(h string) string {
	h = strings.ToLower(strings.TrimSuffix(strings.Trim(h, "[]"), "."))
	if a, err := netip.ParseAddr(h); err == nil {
		return a.WithZone("").Unmap().String()
	}
	return h
}

// Allowed reports whether host (a name or an address literal) is on the allow-list.
func (p Policy) Allowed(host string) bool {
	h := normalizeHost(host)
	if slices.Contains(p.hosts, h) {
		return true
	}
	if a, err := netip.ParseAddr(h); err == nil {
		return p.allowedAddr(a)
	}
	return false
}

func (p Policy) allowedAddr(a netip.Addr) bool {
	a = a.WithZone("").Unmap()
	if slices.Contains(p.hosts, a.String()) {
		return true
	}
	for _, pre := range p.prefixes {
		if pre.Contains(a) {
			return true
		}
	}
	return false
}

// CheckURL parses a callback URL and checks everything that can be checked without
// resolving: the scheme is http or https, there is a host, and the host is not a refused
// name or address. It returns the host (without port) that the caller must resolve and
// pass, address by address, to CheckAddr. Its errors never quote the URL.
func (p Policy) CheckURL(raw string) (host string, err error) {
	if strings.TrimSpace(raw) == "" {
		return "", &RefusedError{Reason: "the callback url is empty: give an http:// or https:// URL"}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", &RefusedError{Reason: "the callback url does not parse as a URL: give an http:// or https:// URL"}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", &RefusedError{Reason: fmt.Sprintf("the callback url scheme %q is not allowed: use http or https", u.Scheme)}
	}
	host = u.Hostname()
	if host == "" {
		return "", &RefusedError{Reason: "the callback url has no host"}
	}
	return host, p.CheckHost(host)
}

// CheckHost refuses a metadata host name, or an address literal that CheckAddr refuses,
// unless the allow-list names it.
func (p Policy) CheckHost(host string) error {
	if p.Allowed(host) {
		return nil
	}
	h := normalizeHost(host)
	if a, err := netip.ParseAddr(h); err == nil {
		return p.CheckAddr(host, a)
	}
	if slices.Contains(metadataHosts, h) {
		return &RefusedError{Host: host, Reason: "is a cloud metadata service; list it with --callback-allow-host to allow it"}
	}
	return nil
}

// CheckAddr refuses an address a callback for host would be sent to when it is
// link-local or a metadata endpoint, unless host or the address is on the allow-list.
// IPv4-mapped and NAT64 forms are judged by the IPv4 address they carry.
func (p Policy) CheckAddr(host string, a netip.Addr) error {
	// A zone (fe80::1%eth0) says which interface, not which address; prefixes never
	// contain zoned addresses, so it is dropped before any comparison.
	a = a.WithZone("").Unmap()
	if p.Allowed(host) || p.allowedAddr(a) {
		return nil
	}
	if reason, blocked := Blocked(a); blocked {
		return &RefusedError{Host: host, Reason: reason + "; list the host with --callback-allow-host to allow it"}
	}
	return nil
}

// Blocked reports whether a is a cloud metadata endpoint or link-local, and why. It is
// the block shared by callbacks and the connectors' dial policy (SPEC §14.1); the reason
// names the address but no flag, as each policy has its own way out (or none).
// IPv4-mapped and NAT64 forms are judged by the IPv4 address they carry.
func Blocked(a netip.Addr) (reason string, blocked bool) {
	a = a.WithZone("").Unmap()
	if nat64.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	switch {
	case slices.Contains(metadataAddrs, a):
		return fmt.Sprintf("address %s is a cloud metadata endpoint", a), true
	case linkLocal4.Contains(a) || linkLocal6.Contains(a):
		return fmt.Sprintf("address %s is link-local (169.254.0.0/16, fe80::/10), where cloud metadata services live", a), true
	}
	return "", false
}

// IsMetadataHost reports whether host names a cloud metadata service (any case, with or
// without the trailing root dot).
func IsMetadataHost(host string) bool { return slices.Contains(metadataHosts, normalizeHost(host)) }
