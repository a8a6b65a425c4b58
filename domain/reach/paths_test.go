package reach_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/reach"
)

func TestPathsCheck(t *testing.T) {
	t.Parallel()
	p := reach.NewPaths([]string{"/srv/data/files", "/srv/shared"}, "/srv/data",
		[]reach.PathFile{{Path: "/etc/sluice/principals.yaml", Flag: "--auth-config"}}, "/srv/data/history.db")
	for _, tc := range []struct {
		path string
		want error // nil: allowed
	}{
		{"/srv/data/files/in.csv", nil},
		{"/srv/data/files/deep/er/out.jsonl", nil},
		{"/srv/data/files", nil},
		{"/srv/shared/x.db", nil},
		{"/srv/shared", nil},
		{"/srv/sharedother/x.csv", reach.ErrPathRefused}, // a prefix of a name is not a parent
		{"/srv/data/history.db", reach.ErrHistoryRefused},
		{"/srv/data/history.db-wal", reach.ErrHistoryRefused},
		{"/srv/data/history.db-shm", reach.ErrHistoryRefused},
		{"/srv/data/history.db-journal", reach.ErrHistoryRefused},
		{"/srv/data/auth-token", reach.ErrPathRefused},
		{"/srv/data", reach.ErrPathRefused},
		{"/etc/sluice/principals.yaml", reach.ErrPathRefused},
		{"/etc/passwd", reach.ErrPathRefused},
		{"/proc/self/environ", reach.ErrPathRefused},
		{"/sys/kernel", reach.ErrPathRefused},
		{"/dev/mem", reach.ErrPathRefused},
		{"relative/x.csv", reach.ErrPathRefused},                // the adapter makes paths absolute first
		{"/srv/data/files/../auth-token", reach.ErrPathRefused}, // and cleans them
	} {
		err := p.Check("pipeline.source.config.path", tc.path)
		if tc.want == nil {
			require.NoError(t, err, tc.path)
			continue
		}
		require.ErrorIs(t, err, tc.want, tc.path)
		var re *reach.RefusedError
		require.True(t, errors.As(err, &re))
		require.Equal(t, "pipeline.source.config.path", re.Key)
		require.Contains(t, err.Error(), "pipeline.source.config.path")
		require.Contains(t, err.Error(), tc.path)
	}
}

func TestPathsMessagesNameTheFlag(t *testing.T) {
	t.Parallel()
	p := reach.NewPaths([]string{"/srv/data/files"}, "/srv/data",
		[]reach.PathFile{{Path: "/etc/p.yaml", Flag: "--auth-config"}}, "")
	require.ErrorContains(t, p.Check("k", "/etc/passwd"), "--allow-path")
	require.ErrorContains(t, p.Check("k", "/etc/p.yaml"), "--auth-config")
	require.Equal(t, reach.CodePathRefused, reach.CodeOf(p.Check("k", "/etc/passwd")))
}

// Allowing the data directory itself, or a parent of it, must not open the tokens, the
// locks or the history inside it.
func TestPathsDataDirStaysClosed(t *testing.T) {
	t.Parallel()
	for _, allow := range [][]string{{"/srv/data"}, {"/srv"}, {"/"}} {
		p := reach.NewPaths(allow, "/srv/data", nil, "/srv/data/history.db")
		require.ErrorIs(t, p.Check("k", "/srv/data/auth-token"), reach.ErrPathRefused, allow)
		require.ErrorIs(t, p.Check("k", "/srv/data/history.db"), reach.ErrHistoryRefused, allow)
		require.ErrorIs(t, p.Check("k", "/proc/1/environ"), reach.ErrPathRefused, allow)
	}
	p := reach.NewPaths([]string{"/"}, "/srv/data", nil, "")
	require.NoError(t, p.Check("k", "/etc/hosts"))
}

// The history file is refused even when the operator allowed its directory.
func TestPathsHistoryOutsideDataDir(t *testing.T) {
	t.Parallel()
	p := reach.NewPaths([]string{"/var/lib/hist"}, "/srv/data", nil, "/var/lib/hist/h.db")
	require.ErrorIs(t, p.Check("k", "/var/lib/hist/h.db"), reach.ErrHistoryRefused)
	require.ErrorIs(t, p.Check("k", "/var/lib/hist/h.db-wal"), reach.ErrHistoryRefused)
	require.NoError(t, p.Check("k", "/var/lib/hist/other.db"))
	require.Equal(t, "/var/lib/hist", p.Base())
}
