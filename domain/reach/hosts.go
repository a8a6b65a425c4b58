package reach

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/domain/callback"
)

// Hosts is the dial policy of connectors (SPEC §14.1). Link-local and cloud metadata
// addresses — the rule callbacks follow (§2.5) — are always refused. With one or more
// --allow-host patterns every other host is refused too. The zero value allows every
// host but the always-refused ones.
type Hosts struct {
	patterns []hostPattern
}

// hostPattern is one --allow-host entry: a host name, *.suffix, an address or a CIDR
// prefix, optionally with :port.
type hostPattern struct {
	raw    string
	name   string       // exact host name, normalized
	suffix string       // ".example.com" for *.example.com
	prefix netip.Prefix // an address (as a /32 or /128) or a CIDR prefix
	port   uint16       // 0: any port
}

// ParseHosts reads the --allow-host patterns. An entry that is none of the accepted
// forms is an error naming it and the flag.
func ParseHosts(list []string) (Hosts, error) {
	var h Hosts
	for _, raw := range list {
		raw = strings.TrimSpace(raw)
		if raw == "" {
			continue
		}
		p, err := parsePattern(raw)
		if err != nil {
			return Hosts{}, fmt.Errorf("--allow-host %q: %w; use a host name, *.suffix, an IP address or a CIDR prefix, optionally with :port", raw, err)
		}
		h.patterns = append(h.patterns, p)
	}
	return h, nil
}

func parsePattern(raw string) (hostPattern, error) {
	p := hostPattern{raw: raw}
	host := raw
	switch {
	case strings.HasPrefix(raw, "["): // [v6] or [v6]:port or [v6/len]:port
		end := strings.Index(raw, "]")
		if end < 0 {
			return p, fmt.Errorf("unclosed [")
		}
		host = raw[1:end]
		if rest := raw[end+1:]; rest != "" {
			if !strings.HasPrefix(rest, ":") {
				return p, fmt.Errorf("text after ]")
			}
			if err := p.setPort(rest[1:]); err != nil {
				return p, err
			}
		}
	case strings.Count(raw, ":") == 1: // name:port, v4:port, v4/len:port
		var port string
		host, port, _ = strings.Cut(raw, ":")
		if err := p.setPort(port); err != nil {
			return p, err
		}
	}
	if strings.Contains(host, "/") {
		pre, err := netip.ParsePrefix(host)
		if err != nil {
			return p, fmt.Errorf("not a CIDR prefix")
		}
		p.prefix = unmapPrefix(pre.Masked())
		return p, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.WithZone("").Unmap()
		p.prefix = netip.PrefixFrom(a, a.BitLen())
		return p, nil
	}
	name := normalizeName(host)
	if s, ok := strings.CutPrefix(name, "*."); ok {
		if s == "" || !validName(s) {
			return p, fmt.Errorf("not a host name suffix")
		}
		p.suffix = "." + s
		return p, nil
	}
	if !validName(name) {
		return p, fmt.Errorf("not a host name")
	}
	p.name = name
	return p, nil
}

func (p *hostPattern) setPort(s string) error {
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil || n == 0 {
		return fmt.Errorf("port %q is not a number from 1 to 65535", s)
	}
	p.port = uint16(n)
	return nil
}

// unmapPrefix turns ::ffff:a.b.c.d/len (len ≥ 96) into its IPv4 prefix, so it matches
// the unmapped addresses it is compared with.
func unmapPrefix(p netip.Prefix) netip.Prefix {
	if p.Addr().Is4In6() && p.Bits() >= 96 {
		return netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return p
}

func normalizeName(h string) string {
	return strings.ToLower(strings.TrimSuffix(strings.Trim(strings.TrimSpace(h), "[]"), "."))
}

func validName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, r := range s {
		ok := r == '-' || r == '.' || r == '_' || r >= 'a' && r <= 'z' || r >= '0' && r <= '9'
		if !ok {
			return false
		}
	}
	return true
}

// Restricted reports whether --allow-host patterns were given.
func (h Hosts) Restricted() bool { return len(h.patterns) > 0 }

func (p hostPattern) portOK(port uint16) bool { return p.port == 0 || p.port == port }

func (p hostPattern) matchesName(name string, port uint16) bool {
	if !p.portOK(port) {
		return false
	}
	return p.name != "" && p.name == name || p.suffix != "" && strings.HasSuffix(name, p.suffix)
}

func (p hostPattern) matchesAddr(a netip.Addr, port uint16) bool {
	return p.prefix.IsValid() && p.portOK(port) && p.prefix.Contains(a)
}

// CheckName judges host (a name or an address literal) and port before anything is
// resolved: at submit, for literal hosts, and before a dial. A name no pattern can allow
// is refused; a name only an address pattern could allow is left to CheckAddr.
func (h Hosts) CheckName(key, host string, port uint16) error {
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return h.CheckAddr(key, host, a, port)
	}
	name := normalizeName(host)
	target := net.JoinHostPort(host, strconv.Itoa(int(port)))
	if callback.IsMetadataHost(name) {
		return &RefusedError{Kind: ErrHostRefused, Key: key, Target: target,
			Reason: "it is a cloud metadata service, which no connector may reach whatever --allow-host says"}
	}
	if !h.Restricted() {
		return nil
	}
	for _, p := range h.patterns {
		if p.matchesName(name, port) || p.prefix.IsValid() && p.portOK(port) {
			return nil
		}
	}
	return h.notListed(key, target)
}

// CheckAddr judges one address host resolved to, right before it is dialed.
func (h Hosts) CheckAddr(key, host string, a netip.Addr, port uint16) error {
	a = a.WithZone("").Unmap()
	target := net.JoinHostPort(a.String(), strconv.Itoa(int(port)))
	if name := normalizeName(host); name != "" && name != a.String() {
		target = host + " (" + target + ")"
	}
	if reason, blocked := callback.Blocked(a); blocked {
		return &RefusedError{Kind: ErrHostRefused, Key: key, Target: target,
			Reason: reason + ", which no connector may reach whatever --allow-host says"}
	}
	if !h.Restricted() {
		return nil
	}
	name := normalizeName(host)
	for _, p := range h.patterns {
		if p.matchesAddr(a, port) || p.matchesName(name, port) {
			return nil
		}
	}
	return h.notListed(key, target)
}

func (h Hosts) notListed(key, target string) error {
	list := make([]string, 0, len(h.patterns))
	for _, p := range h.patterns {
		list = append(list, p.raw)
	}
	return &RefusedError{Kind: ErrHostRefused, Key: key, Target: target,
		Reason: fmt.Sprintf("it matches no --allow-host pattern (%s); add one with --allow-host", strings.Join(list, ", "))}
}
