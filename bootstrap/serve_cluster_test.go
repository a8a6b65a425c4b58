package bootstrap_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/cli"
	"github.com/sluicehq/sluice/bootstrap"
)

func TestServeRefusesBadClusterFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	shared := "sqlite:" + filepath.Join(dir, "shared.db")
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"default history", []string{"--cluster", "--no-auth"}, nil,
			[]string{"--history", "given explicitly", "private to one member"}},
		{"memory history", []string{"--cluster", "--no-auth", "--history", "memory"}, nil,
			[]string{"--history", "memory", "one process"}},
		{"no auth choice", []string{"--cluster", "--history", shared}, nil,
			[]string{"--cluster", "--auth-token", "--auth-config", "--no-auth"}},
		{"env cluster", []string{"--no-auth"}, map[string]string{"SLUICE_CLUSTER": "true"},
			[]string{"--history", "private to one member"}},
		{"pool wait without cluster", []string{"--history", "memory", "--pool-wait-timeout-secs", "60"}, nil,
			[]string{"--pool-wait-timeout-secs", "requires --cluster"}},
		{"pool wait negative", []string{"--cluster", "--no-auth", "--history", shared, "--pool-wait-timeout-secs", "-1"}, nil,
			[]string{"--pool-wait-timeout-secs", "negative"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			data := filepath.Join(dir, tc.name)
			args := append([]string{"serve", "--data-dir", data}, tc.args...)
			code, stdout, stderr := run(t, tc.env, args...)
			require.Equal(t, 2, code, stderr)
			require.Empty(t, stdout)
			for _, w := range tc.want {
				require.Contains(t, stderr, w)
			}
			_, err := os.Stat(data)
			require.ErrorIs(t, err, os.ErrNotExist, "nothing is created before the flags are valid")
		})
	}
}

// clusterServer is an in-process `sluice serve --cluster` on port 0; its address is read
// from its log.
type clusterServer struct {
	addr   string
	stderr *lockedBuffer
	stop   func() int
}

var listening = regexp.MustCompile(`"address":"http://([^"]+)"`)

func startClusterServer(t *testing.T, args ...string) *clusterServer {
	t.Helper()
	s := &clusterServer{stderr: &lockedBuffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- bootstrap.Run(ctx, append([]string{"sluice", "serve", "--cluster", "--listen", "127.0.0.1:0"}, args...), cli.Env{
			Lookup: func(string) (string, bool) { return "", false },
			Stdin:  strings.NewReader(""), Stdout: &lockedBuffer{}, Stderr: s.stderr,
		})
	}()
	var once sync.Once
	code := -1
	s.stop = func() int {
		once.Do(func() {
			cancel()
			select {
			case code = <-done:
			case <-time.After(30 * time.Second):
				t.Errorf("serve did not stop\n%s", s.stderr)
			}
		})
		return code
	}
	t.Cleanup(func() { s.stop() })
	require.Eventually(t, func() bool {
		m := listening.FindStringSubmatch(s.stderr.String())
		if m == nil {
			return false
		}
		s.addr = m[1]
		return true
	}, 20*time.Second, 20*time.Millisecond, "serve did not come up:\n%s", s.stderr)
	return s
}

func (s *clusterServer) ready(t *testing.T) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get("http://" + s.addr + "/readyz")
	require.NoError(t, err)
	defer resp.Body.Close()
	var out map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
	return resp.StatusCode, out
}

// Two members on one SQLite file: port 0 is advertised as the port actually bound, each
// lists the other, and neither takes the single-server lock.
func TestServeClusterOnSharedSQLite(t *testing.T) {
	t.Parallel()
	history := "sqlite:" + filepath.Join(t.TempDir(), "shared.db")
	common := []string{"--history", history, "--no-auth", "--lease-ttl-secs", "3", "--cluster-poll-secs", "1"}
	a := startClusterServer(t, append(common, "--data-dir", t.TempDir())...)
	b := startClusterServer(t, append(common, "--data-dir", t.TempDir(), "--pool", "gpu")...)
	require.NotContains(t, a.addr, ":0", "the bound port, not the configured 0")

	var ready map[string]any
	require.Eventually(t, func() bool {
		var code int
		code, ready = a.ready(t)
		cl := ready["cluster"].(map[string]any)
		return code == http.StatusOK && cl["instances"] == float64(2)
	}, 20*time.Second, 50*time.Millisecond, "a lists both members")
	cl := ready["cluster"].(map[string]any)
	require.Equal(t, true, cl["enabled"])
	require.Equal(t, []any{"default"}, cl["pools"], "pools are this member's")
	listens := map[string][]any{}
	for _, m := range cl["members"].([]any) {
		mm := m.(map[string]any)
		listens[mm["listen"].(string)] = mm["pools"].([]any)
	}
	require.Equal(t, map[string][]any{a.addr: {"default"}, b.addr: {"gpu"}}, listens)

	resp, err := http.Get("http://" + a.addr + "/metrics")
	require.NoError(t, err)
	text, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Contains(t, string(text), "sluice_serve_cluster_enabled 1")
	require.Contains(t, string(text), "sluice_serve_cluster_instances 2")

	// A server without --cluster on the members' history is refused: it would take their
	// running runs for orphans.
	code, _, stderr := run(t, nil, "serve", "--history", history, "--no-auth", "--listen", "127.0.0.1:0",
		"--data-dir", t.TempDir())
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, "shared by clustered members")
	require.Contains(t, stderr, "listen "+a.addr)
	require.Contains(t, stderr, "--cluster")

	require.Equal(t, 0, b.stop(), b.stderr.String())
	require.Eventually(t, func() bool {
		_, ready = a.ready(t)
		return ready["cluster"].(map[string]any)["instances"] == float64(1)
	}, 10*time.Second, 50*time.Millisecond, "a member that stopped cleanly leaves the list at once")
	require.Equal(t, 0, a.stop(), a.stderr.String())
}

// A clustered member is refused on the history of a running server without --cluster,
// and told who holds it.
func TestServeClusterRefusesASingleServersHistory(t *testing.T) {
	t.Parallel()
	history := "sqlite:" + filepath.Join(t.TempDir(), "single.db")
	single := startServer(t, nil, "--history", history, "--no-auth", "--data-dir", t.TempDir())
	_, ready := single.do(t, "GET", "/readyz", "", "")
	holder := ready["cluster"].(map[string]any)["members"].([]any)[0].(map[string]any)["instance_id"].(string)

	code, _, stderr := run(t, nil, "serve", "--cluster", "--history", history, "--no-auth", "--listen", "127.0.0.1:0",
		"--data-dir", t.TempDir())
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, holder)
	require.Contains(t, stderr, "restart it with --cluster")
	require.Equal(t, 0, single.stop())
}
