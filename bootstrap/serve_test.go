package bootstrap_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/cli"
	"github.com/sluicehq/sluice/bootstrap"
)

func TestServeGraphValidates(t *testing.T) {
	t.Parallel()
	require.NoError(t, bootstrap.ValidateServeGraph())
}

func TestServeRefusesBadFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"listen", []string{"--listen", "nope"}, nil, "--listen"},
		{"listen port", []string{"--listen", "127.0.0.1:99999"}, nil, "--listen"},
		{"history scheme", []string{"--history", "mysql://u:hunter22@h/db"}, nil, "--history"},
		{"empty data dir", []string{"--data-dir", ""}, nil, "--data-dir"},
		{"max concurrent", []string{"--max-concurrent-runs", "0"}, nil, "--max-concurrent-runs"},
		{"max queued", []string{"--max-queued-runs", "-1"}, nil, "--max-queued-runs"},
		{"gc heap floor", []string{"--gc-heap-floor-mib", "-1"}, nil, "--gc-heap-floor-mib"},
		{"body limit", []string{"--body-limit-bytes", "0"}, nil, "--body-limit-bytes"},
		{"grace", []string{"--shutdown-grace-secs", "-1"}, nil, "--shutdown-grace-secs"},
		{"kill", []string{"--shutdown-kill-secs", "-1"}, nil, "--shutdown-kill-secs"},
		{"retain", []string{"--retain-terminal-runs-secs", "0"}, nil, "--retain-terminal-runs-secs"},
		{"idempotency", []string{"--idempotency-retention-secs", "0"}, nil, "--idempotency-retention-secs"},
		{"retain audit", []string{"--retain-audit-secs", "0"}, nil, "--retain-audit-secs"},
		{"retain audit env", nil, map[string]string{"SLUICE_RETAIN_AUDIT_SECS": "-5"}, "--retain-audit-secs"},
		{"callback allow host", []string{"--callback-allow-host", "not/a/cidr"}, nil, "--callback-allow-host"},
		{"allow file dir", []string{"--allow-file-dir", filepath.Join(dir, "missing")}, nil, "--allow-file-dir"},
		{"allow path", []string{"--allow-path", filepath.Join(dir, "missing")}, nil, "--allow-path"},
		{"allow host", []string{"--allow-host", "db:notaport"}, nil, "--allow-host"},
		{"allow host env", nil, map[string]string{"SLUICE_ALLOW_HOST": "ok.example,10.0.0.0/40"}, "--allow-host"},
		{"timezone", []string{"--timezone", "Mars/Olympus"}, nil, "--timezone"},
		{"timezone local", []string{"--timezone", "Local"}, nil, "--timezone"},
		{"pool name", []string{"--pool", "Bad Pool"}, nil, "--pool"},
		{"pool twice", []string{"--pool", "a,a"}, nil, "--pool"},
		{"lease ttl", []string{"--lease-ttl-secs", "2"}, nil, "--lease-ttl-secs"},
		{"leader ttl", []string{"--leader-ttl-secs", "2"}, nil, "--leader-ttl-secs"},
		{"poll not below ttl", []string{"--cluster-poll-secs", "30"}, nil, "--cluster-poll-secs"},
		{"poll zero", []string{"--cluster-poll-secs", "0"}, nil, "--cluster-poll-secs"},
		{"attempts", []string{"--cluster-max-attempts", "0"}, nil, "--cluster-max-attempts"},
		{"log level", []string{"--log-level", "loud"}, nil, "--log-level"},
		{"two auth flags", []string{"--auth-token", "abcdefgh", "--no-auth"}, nil, "exclusive"},
		{"auth config missing", []string{"--auth-config", filepath.Join(dir, "none.yaml")}, nil, "--auth-config"},
		{"env ttl", nil, map[string]string{"SLUICE_LEASE_TTL_SECS": "1"}, "--lease-ttl-secs"},
		{"env not a number", nil, map[string]string{"SLUICE_MAX_QUEUED_RUNS": "many"}, "SLUICE_MAX_QUEUED_RUNS"},
		{"env pool alias", nil, map[string]string{"SLUICE_SERVE_POOLS": "ok,Not_OK"}, "--pool"},
		{"positional argument", []string{"extra"}, nil, "unknown command"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			args := append([]string{"serve", "--data-dir", filepath.Join(dir, tc.name)}, tc.args...)
			code, stdout, stderr := run(t, tc.env, args...)
			require.Equal(t, 2, code, stderr)
			require.Empty(t, stdout)
			require.Contains(t, stderr, tc.want)
			require.NotContains(t, stderr, "hunter22", "credentials never appear in messages")
			_, err := os.Stat(filepath.Join(dir, tc.name))
			require.ErrorIs(t, err, os.ErrNotExist, "nothing is created before the flags are valid")
		})
	}
}

func TestServeRefusesBadAuthConfig(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, text string
		want       []string
	}{
		{"unknown key", "- {name: a, token: s3cret-token-1, role: admin, tenat: x}\n", []string{"tenat"}},
		{"bad role", "- {name: a, token: s3cret-token-1, role: root}\n", []string{`"root"`, "viewer, operator or admin"}},
		{"shared token", "- {name: a, token: s3cret-token-1, role: admin}\n- {name: b, token: s3cret-token-1, role: viewer}\n",
			[]string{"principal 2", "shared"}},
		{"missing token", "- {name: a, role: admin}\n", []string{"token is required"}},
		{"bad tenant", "- {name: a, token: s3cret-token-1, role: viewer, tenant: Acme Corp}\n", []string{"tenant"}},
		{"not a list", "name: a\ntoken: s3cret-token-1\n", []string{"list", `line 1: found a mapping with keys "name", "token"`}},
		{"wrapped, not a list", "principals:\n  name: a\n  token: s3cret-token-1\n", []string{"`principals:` must be a list", "line 2"}},
		{"a scalar", "s3cret-token-1\n", []string{"line 1: found a single value"}},
		{"empty", "[]\n", []string{"no principals"}},
		{"json", `[{"name": "a", "token": "s3cret-token-1", "role": "nobody"}]`, []string{`"nobody"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			path := filepath.Join(dir, "auth.yaml")
			require.NoError(t, os.WriteFile(path, []byte(tc.text), 0o600))
			code, _, stderr := run(t, nil, "serve", "--history", "memory", "--auth-config", path)
			require.Equal(t, 2, code, stderr)
			require.Contains(t, stderr, "--auth-config")
			for _, w := range tc.want {
				require.Contains(t, stderr, w)
			}
			require.NotContains(t, stderr, "s3cret-token-1", "tokens never appear in messages")
			require.NotContains(t, stderr, "principalEntry", "the file's shape is told in its own words, not Go's")
		})
	}
}

// freeAddr is a loopback address nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// lockedBuffer is written by the server while the test reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// server is an in-process `sluice serve`; stop cancels its context (as a signal would).
type server struct {
	addr           string
	stdout, stderr *lockedBuffer
	stop           func() int
}

func startServer(t *testing.T, env map[string]string, args ...string) *server {
	t.Helper()
	// Port 0, read back from the log: a port picked by a test and closed again can be
	// taken by a parallel test's server before this one binds it, and the test then
	// talks to the wrong server (it happened in CI).
	s := &server{stdout: &lockedBuffer{}, stderr: &lockedBuffer{}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan int, 1)
	go func() {
		done <- bootstrap.Run(ctx, append([]string{"sluice", "serve", "--listen", "127.0.0.1:0"}, args...), cli.Env{
			Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
			Stdin:  strings.NewReader(""), Stdout: s.stdout, Stderr: s.stderr,
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
			if code != 0 {
				t.Logf("serve exited %d:\n%s", code, s.stderr)
			}
		})
		return code
	}
	t.Cleanup(func() { s.stop() })
	require.Eventually(t, func() bool {
		select {
		case c := <-done:
			done <- c
			return true // ended early: the caller's check of stop() reports it
		default:
		}
		if s.addr == "" {
			m := listening.FindStringSubmatch(s.stderr.String())
			if m == nil {
				return false
			}
			s.addr = m[1]
		}
		if !strings.Contains(s.stderr.String(), `"msg":"serve started"`) {
			return false // listening, but start hooks still run: a stop now interrupts the start
		}
		resp, err := http.Get("http://" + s.addr + "/livez")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	}, 20*time.Second, 20*time.Millisecond, "serve did not come up:\n%s", s.stderr)
	return s
}

func (s *server) do(t *testing.T, method, path, token, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+s.addr+path, strings.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var out map[string]any
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		require.NoError(t, json.Unmarshal(raw, &out), string(raw))
	} else {
		out = map[string]any{"text": string(raw)}
	}
	return resp.StatusCode, out
}

func TestServeInProcessRunsAndStops(t *testing.T) {
	t.Parallel()
	s := startServer(t, map[string]string{"SLUICE_SERVE_POOLS": "default,gpu"},
		"--history", "memory", "--no-auth", "--max-concurrent-runs", "3", "--lease-ttl-secs", "3", "--cluster-poll-secs", "1")

	code, ready := s.do(t, "GET", "/readyz", "", "")
	require.Equal(t, http.StatusOK, code, ready)
	require.Equal(t, "ok", ready["status"])
	require.Equal(t, true, ready["history_ok"])
	require.Equal(t, true, ready["queue_ok"])
	require.Equal(t, false, ready["draining"])
	cl := ready["cluster"].(map[string]any)
	require.Equal(t, false, cl["enabled"])
	require.EqualValues(t, 1, cl["instances"])
	require.Equal(t, []any{"default", "gpu"}, cl["pools"], "the env alias SLUICE_SERVE_POOLS sets --pool")
	members := cl["members"].([]any)
	require.Len(t, members, 1)
	self := members[0].(map[string]any)
	require.Equal(t, s.addr, self["listen"])
	require.EqualValues(t, 3, self["max_concurrent"])
	require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-7`, self["instance_id"], "instance ids are UUIDv7")

	cfg := `{"config": "version: 1\nname: tiny\npipeline:\n  source: {type: generate, config: {count: 3}}\n  sink: {type: stdout}\n"}`
	code, sub := s.do(t, "POST", "/v1/runs", "", cfg)
	require.Equal(t, http.StatusAccepted, code, sub)
	id := sub["run_id"].(string)
	require.Eventually(t, func() bool {
		_, r := s.do(t, "GET", "/v1/runs/"+id, "", "")
		return r["status"] == "completed"
	}, 20*time.Second, 20*time.Millisecond)

	code, m := s.do(t, "GET", "/metrics", "", "")
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, m["text"], "sluice_serve_cluster_enabled 0")

	require.Equal(t, 0, s.stop(), s.stderr.String())
	require.Equal(t, 3, strings.Count(s.stdout.String(), `"id":`), "the stdout sink writes to the process stdout")
	logs := s.stderr.String()
	require.Contains(t, logs, "--no-auth")
	require.Contains(t, logs, "sluice serve listening")
	require.Contains(t, logs, `"instance_id":"`+self["instance_id"].(string)+`"`)
	require.Contains(t, logs, "sluice serve stopped")
	require.Equal(t, 1, strings.Count(strings.SplitN(logs, "\n", 3)[1], `"instance_id"`), "one instance_id per line")
}

func TestServeGeneratesTokenOnceAndRequiresIt(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	s := startServer(t, nil, "--data-dir", data, "--history", "memory")
	path := filepath.Join(data, cli.TokenFile)
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	token := strings.TrimSpace(string(raw))
	require.Len(t, token, 64)

	code, _ := s.do(t, "GET", "/v1/runs", "", "")
	require.Equal(t, http.StatusUnauthorized, code)
	code, _ = s.do(t, "GET", "/v1/runs", token, "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, 0, s.stop())
	require.Contains(t, s.stderr.String(), path)
	require.NotContains(t, s.stderr.String(), token, "the token itself is never printed")

	s = startServer(t, nil, "--data-dir", data, "--history", "memory")
	code, _ = s.do(t, "GET", "/v1/runs", token, "")
	require.Equal(t, http.StatusOK, code, "a restart reuses the stored token")
	require.Equal(t, 0, s.stop())
}

func TestServeAuthConfigRoles(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "auth.json")
	require.NoError(t, os.WriteFile(path, []byte(`[{"name":"ops","token":"operator-token-1","role":"operator"},
{"name":"look","token":"viewer-token-1","role":"viewer"}]`), 0o600))
	s := startServer(t, nil, "--history", "memory", "--auth-config", path)
	body := `{"config": "version: 1\nname: tiny\npipeline:\n  source: {type: generate, config: {count: 1}}\n  sink: {type: stdout}\n"}`
	code, out := s.do(t, "POST", "/v1/runs", "viewer-token-1", body)
	require.Equal(t, http.StatusForbidden, code, out)
	code, out = s.do(t, "POST", "/v1/runs", "operator-token-1", body)
	require.Equal(t, http.StatusAccepted, code, out)
	require.Equal(t, 0, s.stop())
}

// TestServeAuthConfigWrapped: `principals: [...]` is read like the bare list.
func TestServeAuthConfigWrapped(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "principals.yaml")
	require.NoError(t, os.WriteFile(path, []byte("principals:\n  - {name: look, token: viewer-token-1, role: viewer}\n"), 0o600))
	s := startServer(t, nil, "--history", "memory", "--auth-config", path)
	code, out := s.do(t, "GET", "/v1/runs", "viewer-token-1", "")
	require.Equal(t, http.StatusOK, code, out)
	require.Equal(t, 0, s.stop())
}

func TestEnsureToken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path, tok, created, err := bootstrap.EnsureToken(dir)
	require.NoError(t, err)
	require.True(t, created)
	require.Equal(t, filepath.Join(dir, cli.TokenFile), path)
	_, again, created, err := bootstrap.EnsureToken(dir)
	require.NoError(t, err)
	require.False(t, created)
	require.Equal(t, tok, again)

	empty := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(empty, cli.TokenFile), []byte("\n"), 0o600))
	_, _, _, err = bootstrap.EnsureToken(empty)
	require.ErrorContains(t, err, "is empty")
}

func TestHistorySecrets(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"pw1"}, bootstrap.HistorySecrets("postgres://u:pw1@h/db"))
	require.Equal(t, []string{"pw2"}, bootstrap.HistorySecrets("postgres://h/db?password=pw2&sslmode=disable"))
	require.Empty(t, bootstrap.HistorySecrets("sqlite:./x.db"))
}
