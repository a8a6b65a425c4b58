package callback_test

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/callback"
)

func TestCheckURL(t *testing.T) {
	t.Parallel()
	p, err := callback.NewPolicy(nil)
	require.NoError(t, err)

	tests := []struct {
		url     string
		host    string
		refused bool
	}{
		{url: "https://hooks.example.com/x", host: "hooks.example.com"},
		{url: "http://127.0.0.1:9000/done", host: "127.0.0.1"},
		{url: "http://10.1.2.3/done", host: "10.1.2.3"},
		{url: "http://192.168.0.5/done", host: "192.168.0.5"},
		{url: "http://[::1]:8080/x", host: "::1"},
		{url: "http://[fd12::1]/x", host: "fd12::1"},
		{url: "http://169.254.169.254/latest/meta-data", refused: true},
		{url: "http://169.254.0.1/", refused: true},
		{url: "http://[fe80::1]/", refused: true},
		{url: "http://[fe80::1%25eth0]/", refused: true},
		{url: "http://[febf::1]/", refused: true},
		{url: "http://[::ffff:169.254.169.254]/", refused: true},
		{url: "http://[64:ff9b::a9fe:a9fe]/", refused: true},
		{url: "http://[fd00:ec2::254]/", refused: true},
		{url: "http://100.100.100.200/", refused: true},
		{url: "http://metadata.google.internal/computeMetadata/v1/", refused: true},
		{url: "http://METADATA.Google.Internal./x", refused: true},
		{url: "http://metadata.goog/", refused: true},
		{url: "http://metadata.azure.com/", refused: true},
		{url: "http://metadata/", refused: true},
		{url: "ftp://example.com/x", refused: true},
		{url: "file:///etc/passwd", refused: true},
		{url: "example.com/x", refused: true},
		{url: "http:///x", refused: true},
		{url: "", refused: true},
		{url: "http://exa mple.com/", refused: true},
	}
	for _, tc := range tests {
		t.Run(tc.url, func(t *testing.T) {
			t.Parallel()
			host, err := p.CheckURL(tc.url)
			if tc.refused {
				require.ErrorIs(t, err, callback.ErrRefused)
				var re *callback.RefusedError
				require.ErrorAs(t, err, &re)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.host, host)
		})
	}
}

func TestRefusalNeverQuotesCredentials(t *testing.T) {
	t.Parallel()
	p, err := callback.NewPolicy(nil)
	require.NoError(t, err)
	_, err = p.CheckURL("http://user:hunter2@169.254.169.254/x")
	require.ErrorIs(t, err, callback.ErrRefused)
	require.NotContains(t, err.Error(), "hunter2")
	require.Contains(t, err.Error(), "169.254.169.254")
	require.Contains(t, err.Error(), "--callback-allow-host")

	_, err = p.CheckURL("gopher://user:hunter2@example.com/")
	require.NotContains(t, err.Error(), "hunter2")
}

func TestCheckAddr(t *testing.T) {
	t.Parallel()
	p, err := callback.NewPolicy(nil)
	require.NoError(t, err)
	for _, a := range []string{"169.254.169.254", "169.254.10.20", "fe80::abcd", "fd00:ec2::254", "::ffff:169.254.1.1"} {
		require.ErrorIs(t, p.CheckAddr("hooks.example.com", netip.MustParseAddr(a)), callback.ErrRefused, a)
	}
	for _, a := range []string{"127.0.0.1", "10.0.0.1", "172.16.0.1", "192.168.1.1", "::1", "fd00::1", "8.8.8.8", "2001:db8::1"} {
		require.NoError(t, p.CheckAddr("hooks.example.com", netip.MustParseAddr(a)), a)
	}
}

func TestAllowList(t *testing.T) {
	t.Parallel()
	p, err := callback.NewPolicy([]string{"metadata.google.internal", "169.254.169.254", "fe80::/64", " ", "hooks.internal"})
	require.NoError(t, err)

	_, err = p.CheckURL("http://metadata.google.internal/x")
	require.NoError(t, err)
	_, err = p.CheckURL("http://169.254.169.254/x")
	require.NoError(t, err)
	_, err = p.CheckURL("http://[fe80::5]/x")
	require.NoError(t, err)
	// Other link-local addresses stay refused.
	_, err = p.CheckURL("http://169.254.1.1/x")
	require.ErrorIs(t, err, callback.ErrRefused)
	_, err = p.CheckURL("http://metadata.goog/x")
	require.ErrorIs(t, err, callback.ErrRefused)

	// A listed host may resolve anywhere; a listed address is allowed for any host.
	require.NoError(t, p.CheckAddr("hooks.internal", netip.MustParseAddr("169.254.5.5")))
	require.NoError(t, p.CheckAddr("other.example", netip.MustParseAddr("169.254.169.254")))
	require.ErrorIs(t, p.CheckAddr("other.example", netip.MustParseAddr("169.254.5.5")), callback.ErrRefused)
	require.True(t, p.Allowed("HOOKS.internal."))
}

func TestNewPolicyRefusesGarbage(t *testing.T) {
	t.Parallel()
	for _, h := range []string{"10.0.0.0/99", "http://x", "a b", "user@host"} {
		_, err := callback.NewPolicy([]string{h})
		require.Error(t, err, h)
		require.Contains(t, err.Error(), "--callback-allow-host")
	}
}
