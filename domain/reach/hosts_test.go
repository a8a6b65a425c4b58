package reach_test

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/reach"
)

func TestParseHostsRefusesBadPatterns(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{"db:0", "db:x", "10.0.0.0/33", "[::1", "*.", "a b", "db:70000", "[::1]x"} {
		_, err := reach.ParseHosts([]string{bad})
		require.Error(t, err, bad)
		require.ErrorContains(t, err, "--allow-host")
	}
}

// Without --allow-host every host is allowed but link-local and metadata addresses.
func TestHostsOpen(t *testing.T) {
	t.Parallel()
	var h reach.Hosts
	for _, tc := range []struct {
		host string
		addr string
		ok   bool
	}{
		{"db.example.com", "10.1.2.3", true},
		{"localhost", "127.0.0.1", true},
		{"169.254.169.254", "169.254.169.254", false},
		{"evil.example", "169.254.169.254", false},                  // a name resolving to the metadata address
		{"::ffff:169.254.169.254", "::ffff:169.254.169.254", false}, // IPv4-mapped IPv6
		{"64:ff9b::a9fe:a9fe", "64:ff9b::a9fe:a9fe", false},         // NAT64
		{"fe80::1", "fe80::1", false},
		{"fd00:ec2::254", "fd00:ec2::254", false},
		{"100.100.100.200", "100.100.100.200", false},
		{"10.0.0.1", "10.0.0.1", true},
	} {
		err := h.CheckAddr("pipeline.source.config.connection_url", tc.host, netip.MustParseAddr(tc.addr), 5432)
		if tc.ok {
			require.NoError(t, err, tc.host)
		} else {
			require.ErrorIs(t, err, reach.ErrHostRefused, tc.host)
			require.ErrorContains(t, err, "pipeline.source.config.connection_url")
		}
	}
	require.ErrorIs(t, h.CheckName("k", "metadata.google.internal.", 80), reach.ErrHostRefused)
	require.ErrorIs(t, h.CheckName("k", "169.254.169.254", 80), reach.ErrHostRefused)
	require.ErrorIs(t, h.CheckName("k", "[::ffff:a9fe:a9fe]", 80), reach.ErrHostRefused)
	require.NoError(t, h.CheckName("k", "db.internal", 5432))
}

func TestHostsPatterns(t *testing.T) {
	t.Parallel()
	h, err := reach.ParseHosts([]string{"db.example.com", "*.corp.example:5432", "10.0.0.0/8", "192.168.1.5:3306", "2001:db8::/32", "[::1]:5432"})
	require.NoError(t, err)
	for _, tc := range []struct {
		host string
		addr string
		port uint16
		ok   bool
	}{
		{"db.example.com", "203.0.113.7", 5432, true}, // by name, any port
		{"DB.Example.COM.", "203.0.113.7", 1, true},   // names are case- and root-dot-insensitive
		{"x.example.com", "203.0.113.7", 5432, false},
		{"pg.corp.example", "203.0.113.8", 5432, true},  // suffix with port
		{"pg.corp.example", "203.0.113.8", 5433, false}, // wrong port
		{"corp.example", "203.0.113.8", 5432, false},    // *.suffix needs a label before it
		{"anything", "10.20.30.40", 9999, true},         // CIDR by resolved address
		{"anything", "::ffff:10.20.30.40", 9999, true},  // IPv4-mapped counts as IPv4
		{"anything", "11.0.0.1", 9999, false},
		{"192.168.1.5", "192.168.1.5", 3306, true},
		{"192.168.1.5", "192.168.1.5", 3307, false},
		{"v6", "2001:db8::1", 80, true},
		{"::1", "::1", 5432, true},
		{"::1", "::1", 5433, false},
		{"pg.corp.example", "169.254.169.254", 5432, false}, // the block wins over every pattern
		{"10.0.0.0", "169.254.0.1", 5432, false},
	} {
		err := h.CheckAddr("k", tc.host, netip.MustParseAddr(tc.addr), tc.port)
		if tc.ok {
			require.NoError(t, err, "%s %s:%d", tc.host, tc.addr, tc.port)
		} else {
			require.ErrorIs(t, err, reach.ErrHostRefused, "%s %s:%d", tc.host, tc.addr, tc.port)
			require.ErrorContains(t, err, "--allow-host")
		}
	}
	// Before resolving: a name only a CIDR could allow is left to the dial.
	require.NoError(t, h.CheckName("k", "unknown.example", 80))
	hn, err := reach.ParseHosts([]string{"db.example.com:5432"})
	require.NoError(t, err)
	require.ErrorIs(t, hn.CheckName("k", "other.example", 5432), reach.ErrHostRefused)
	require.ErrorIs(t, hn.CheckName("k", "db.example.com", 5433), reach.ErrHostRefused)
	require.NoError(t, hn.CheckName("k", "db.example.com", 5432))
	require.ErrorIs(t, hn.CheckName("k", "10.0.0.1", 5432), reach.ErrHostRefused)
}
