package reach_test

import (
	"net/netip"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/reach"
)

func TestCheckHistory(t *testing.T) {
	t.Parallel()
	lo := []netip.Addr{netip.MustParseAddr("127.0.0.1")}
	history := reach.Database{Host: "127.0.0.1", Port: 5432, Addrs: lo, Name: "test", Schemas: []string{"hist"}}
	for _, tc := range []struct {
		name   string
		target reach.Database
		refuse bool
	}{
		{"same", reach.Database{Host: "127.0.0.1", Port: 5432, Addrs: lo, Name: "test", Schemas: []string{"hist"}}, true},
		{"localhost", reach.Database{Host: "localhost", Port: 5432, Name: "test", Schemas: []string{"hist"}}, true},
		{"ipv6 loopback", reach.Database{Host: "::1", Port: 5432, Addrs: []netip.Addr{netip.MustParseAddr("::1")}, Name: "test", Schemas: []string{"hist"}}, true},
		{"unix socket", reach.Database{Host: "/var/run/postgresql", Port: 5432, Name: "test", Schemas: []string{"hist"}}, true},
		{"qualified table in the history schema", reach.Database{Host: "localhost", Port: 5432, Name: "test", Schemas: []string{"public", "hist"}}, true},
		{"other schema", reach.Database{Host: "127.0.0.1", Port: 5432, Addrs: lo, Name: "test", Schemas: []string{"other"}}, false},
		{"other database", reach.Database{Host: "127.0.0.1", Port: 5432, Addrs: lo, Name: "prod", Schemas: []string{"hist"}}, false},
		{"other port", reach.Database{Host: "127.0.0.1", Port: 5433, Addrs: lo, Name: "test", Schemas: []string{"hist"}}, false},
		{"other server", reach.Database{Host: "db.example", Port: 5432, Addrs: []netip.Addr{netip.MustParseAddr("10.0.0.2")}, Name: "test", Schemas: []string{"hist"}}, false},
	} {
		err := reach.CheckHistory("pipeline.sink.config.connection_url", history, tc.target)
		if tc.refuse {
			require.ErrorIs(t, err, reach.ErrHistoryRefused, tc.name)
			require.Equal(t, reach.CodeHistoryRefused, reach.CodeOf(err))
			require.ErrorContains(t, err, "pipeline.sink.config.connection_url")
		} else {
			require.NoError(t, err, tc.name)
		}
	}
	// A history in the default schema is hit by a target without search_path.
	pub := reach.Database{Host: "db", Port: 5432, Addrs: []netip.Addr{netip.MustParseAddr("10.0.0.9")}, Name: "sluice"}
	require.ErrorIs(t, reach.CheckHistory("k", pub, reach.Database{Host: "10.0.0.9", Port: 5432, Addrs: []netip.Addr{netip.MustParseAddr("10.0.0.9")}, Name: "sluice"}), reach.ErrHistoryRefused)
	require.NoError(t, reach.CheckHistory("k", reach.Database{}, pub), "no postgres history, nothing to refuse")
}

// A schema set through libpq's options parameter counts like search_path, so a sink
// cannot hide the history's schema there.
func TestSearchPathIncludesOptions(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		params map[string]string
		want   []string
	}{
		{map[string]string{}, []string{"public"}},
		{map[string]string{"search_path": `"hist", public`}, []string{"hist", "public"}},
		{map[string]string{"options": "-c search_path=hist"}, []string{"hist"}},
		{map[string]string{"options": "-csearch_path=a\\,hist -c statement_timeout=5"}, []string{"a", "hist"}},
		{map[string]string{"search_path": "x", "options": "--search_path=hist"}, []string{"x", "hist"}},
	} {
		db := reach.PostgresDatabase("h", 5432, "d", reach.SearchPath(tc.params))
		require.Equal(t, tc.want, db.Schemas, "%v", tc.params)
	}
}
