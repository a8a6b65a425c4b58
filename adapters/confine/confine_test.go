package confine_test

import (
	"context"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/confine"
	"github.com/sluicehq/sluice/domain/reach"
)

// fakeResolver answers every name with the same addresses.
type fakeResolver struct{ addrs map[string][]netip.Addr }

func (f fakeResolver) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f.addrs[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// layout is a data dir with the default files dir, a history, a principals file and a
// directory outside every allowed one.
type layout struct {
	root, data, files, outside, auth string
}

func newLayout(t *testing.T) layout {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	l := layout{root: root, data: filepath.Join(root, "data"), outside: filepath.Join(root, "outside"),
		auth: filepath.Join(root, "principals.yaml")}
	l.files = filepath.Join(l.data, "files")
	for _, d := range []string{l.files, l.outside} {
		require.NoError(t, os.MkdirAll(d, 0o700))
	}
	for _, f := range []string{filepath.Join(l.data, "history.db"), filepath.Join(l.data, "auth-token"), l.auth,
		filepath.Join(l.outside, "secret.csv"), filepath.Join(l.files, "in.csv")} {
		require.NoError(t, os.WriteFile(f, []byte("x\n"), 0o600))
	}
	return l
}

func (l layout) confinement(t *testing.T, hosts ...string) *confine.Confinement {
	t.Helper()
	c, err := confine.New(context.Background(), confine.Config{
		AllowPaths: []string{l.files}, DataDir: l.data, History: "sqlite:" + filepath.Join(l.data, "history.db"),
		Files: []reach.PathFile{{Path: l.auth, Flag: "--auth-config"}}, AllowHosts: hosts,
		Resolver: fakeResolver{addrs: map[string][]netip.Addr{
			"metadata-alias.example": {netip.MustParseAddr("169.254.169.254")},
			"db.example":             {netip.MustParseAddr("127.0.0.1")},
		}},
	})
	require.NoError(t, err)
	return c
}

func TestPathRules(t *testing.T) {
	t.Parallel()
	l := newLayout(t)
	// A symlink inside the allowed dir pointing outside it, one pointing at the history,
	// one inside it to another allowed file, and a dangling one.
	require.NoError(t, os.Symlink(filepath.Join(l.outside, "secret.csv"), filepath.Join(l.files, "escape.csv")))
	require.NoError(t, os.Symlink(filepath.Join(l.data, "history.db"), filepath.Join(l.files, "hist.db")))
	require.NoError(t, os.Symlink(filepath.Join(l.files, "in.csv"), filepath.Join(l.files, "alias.csv")))
	require.NoError(t, os.Symlink(filepath.Join(l.outside, "new.db"), filepath.Join(l.files, "dangling.db")))
	require.NoError(t, os.Symlink(l.outside, filepath.Join(l.files, "outdir")))
	c := l.confinement(t)
	ctx := context.Background()
	for _, tc := range []struct {
		path string
		want error // nil: allowed
		real string
	}{
		{"in.csv", nil, filepath.Join(l.files, "in.csv")}, // relative: against the first allowed dir
		{filepath.Join(l.files, "in.csv"), nil, filepath.Join(l.files, "in.csv")},
		{"sub/new.jsonl", nil, filepath.Join(l.files, "sub", "new.jsonl")}, // not there yet: a sink's output
		{"alias.csv", nil, filepath.Join(l.files, "in.csv")},
		{"*.csv", nil, filepath.Join(l.files, "*.csv")}, // a glob's directory is judged
		{"escape.csv", reach.ErrPathRefused, ""},
		{"outdir/secret.csv", reach.ErrPathRefused, ""},
		{"outdir/*.csv", reach.ErrPathRefused, ""},
		{"dangling.db", reach.ErrPathRefused, ""},
		{"hist.db", reach.ErrHistoryRefused, ""},
		{"../history.db", reach.ErrHistoryRefused, ""},
		{"../history.db-wal", reach.ErrHistoryRefused, ""},
		{"../auth-token", reach.ErrPathRefused, ""},
		{"../../outside/secret.csv", reach.ErrPathRefused, ""},
		{filepath.Join(l.files, "..", "..", "principals.yaml"), reach.ErrPathRefused, ""},
		{"/proc/self/environ", reach.ErrPathRefused, ""},
		{"/etc/passwd", reach.ErrPathRefused, ""},
		{"/dev/null", reach.ErrPathRefused, ""},
	} {
		real, err := c.Path(ctx, "pipeline.source.config.path", "/ignored/base", tc.path)
		if tc.want == nil {
			require.NoError(t, err, tc.path)
			require.Equal(t, tc.real, real, tc.path)
			continue
		}
		require.ErrorIs(t, err, tc.want, tc.path)
		require.ErrorContains(t, err, "pipeline.source.config.path", tc.path)
	}
	_, err := c.Path(ctx, "k", "", filepath.Join(l.outside, "secret.csv"))
	require.ErrorContains(t, err, "--allow-path")
	_, err = c.Path(ctx, "k", "", l.auth)
	require.ErrorContains(t, err, "--auth-config")
}

func TestNewRefusesMissingAllowedDir(t *testing.T) {
	t.Parallel()
	_, err := confine.New(context.Background(), confine.Config{AllowPaths: []string{filepath.Join(t.TempDir(), "nope")}, DataDir: t.TempDir()})
	require.ErrorContains(t, err, "--allow-path")
	_, err = confine.New(context.Background(), confine.Config{AllowHosts: []string{"bad host"}, DataDir: t.TempDir()})
	require.ErrorContains(t, err, "--allow-host")
}

func TestDialPolicy(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conn.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	ctx := context.Background()
	l := newLayout(t)

	open := l.confinement(t)
	conn, err := open.Dial(ctx, "k", "tcp", net.JoinHostPort("127.0.0.1", port))
	require.NoError(t, err, "without --allow-host loopback is allowed")
	conn.Close()
	conn, err = open.Dial(ctx, "k", "tcp", net.JoinHostPort("db.example", port))
	require.NoError(t, err)
	conn.Close()
	for _, addr := range []string{"169.254.169.254:80", "[::ffff:169.254.169.254]:80", "[fe80::1]:5432",
		"metadata-alias.example:80", "metadata.google.internal:80"} {
		_, err := open.Dial(ctx, "pipeline.source.config.connection_url", "tcp", addr)
		require.ErrorIs(t, err, reach.ErrHostRefused, addr)
		require.ErrorContains(t, err, "pipeline.source.config.connection_url", addr)
	}
	_, err = open.Dial(ctx, "k", "unix", "/var/run/postgresql/.s.PGSQL.5432")
	require.ErrorIs(t, err, reach.ErrHostRefused)

	listed := l.confinement(t, "db.example:"+port)
	conn, err = listed.Dial(ctx, "k", "tcp", net.JoinHostPort("db.example", port))
	require.NoError(t, err, "a listed name is dialed at the addresses it resolves to")
	conn.Close()
	_, err = listed.Dial(ctx, "k", "tcp", net.JoinHostPort("127.0.0.1", port))
	require.ErrorIs(t, err, reach.ErrHostRefused, "with --allow-host an unlisted address is refused")
	require.ErrorContains(t, err, "--allow-host")
	require.ErrorIs(t, listed.Host(ctx, "k", "other.example", 5432), reach.ErrHostRefused)

	cidr := l.confinement(t, "127.0.0.0/8")
	conn, err = cidr.Dial(ctx, "k", "tcp", net.JoinHostPort("db.example", port))
	require.NoError(t, err, "a CIDR allows names resolving inside it")
	conn.Close()
}

func TestPostgresHistoryRefused(t *testing.T) {
	t.Parallel()
	c, err := confine.New(context.Background(), confine.Config{DataDir: t.TempDir(),
		History: "postgres://postgres@127.0.0.1:5432/test?search_path=hist&sslmode=disable"})
	require.NoError(t, err)
	ctx := context.Background()
	same := reach.PostgresDatabase("localhost", 5432, "test", "hist")
	require.ErrorIs(t, c.Database(ctx, "pipeline.sink.config.connection_url", same), reach.ErrHistoryRefused)
	qualified := reach.PostgresDatabase("127.0.0.1", 5432, "test", "", "hist")
	require.ErrorIs(t, c.Database(ctx, "k", qualified), reach.ErrHistoryRefused, "a table qualified with the history's schema")
	require.NoError(t, c.Database(ctx, "k", reach.PostgresDatabase("127.0.0.1", 5432, "test", "other")))
	require.NoError(t, c.Database(ctx, "k", reach.PostgresDatabase("127.0.0.1", 5432, "prod", "hist")))
}
