package e2e_test

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/vault"
	"github.com/sluicehq/sluice/tests/e2e"
)

func newVaultKey(t *testing.T) string {
	t.Helper()
	b := make([]byte, 32)
	_, err := rand.Read(b)
	require.NoError(t, err)
	return base64.StdEncoding.EncodeToString(b)
}

// A template with a secret param runs with the secret in its sink path; the plaintext is
// then nowhere: not in the history file, the log, any API answer or /metrics. A server
// with another key fails a sealed run naming the key; tenants stay apart.
func TestVaultTemplatesAndTenants(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const secretValue = "Sup3r-S3cret-Tok3n-42"
	auth := writeTenantPrincipals(t, dir)
	k1, k2 := newVaultKey(t), newVaultKey(t)
	v1, err := vault.FromBase64(k1)
	require.NoError(t, err)
	data := filepath.Join(dir, "data")
	history := filepath.Join(dir, "history.db")
	a := startServe(t, data, nil, "--auth-config", auth, "--vault-key", k1, "--history", "sqlite:"+history,
		"--max-concurrent-runs", "1", "--shutdown-grace-secs", "0")
	a.token = "admin-token-1"

	var answers bytes.Buffer // every API answer, searched for the secret at the end
	call := func(s *server, method, path, token string, body any) (int, []byte) {
		var raw []byte
		if body != nil {
			raw, err = json.Marshal(body)
			require.NoError(t, err)
		}
		code, resp := s.call(t, method, path, token, raw)
		answers.Write(resp)
		return code, resp
	}
	tpl := secretTemplate(dir, 20)
	code, resp := call(a, "POST", "/v1/templates", "admin-token-1", map[string]any{"id": "orders", "config": tpl, "tenants": []string{"acme"}})
	require.Equal(t, http.StatusCreated, code, string(resp))
	code, resp = call(a, "POST", "/v1/templates", "admin-token-1", map[string]any{"id": "orders", "config": tpl, "tenants": []string{"acme"}})
	require.Equal(t, http.StatusCreated, code, string(resp))
	require.Contains(t, string(resp), `"version":2`)
	code, resp = call(a, "POST", "/v1/templates", "admin-token-1", map[string]any{"id": "bad", "config": strings.Replace(tpl, "type: string, secret", "type: strng, secret", 1)})
	require.Equal(t, http.StatusUnprocessableEntity, code, string(resp))
	require.Contains(t, string(resp), "params.token")

	var started struct {
		RunID string `json:"run_id"`
	}
	code, resp = call(a, "POST", "/v1/templates/orders/runs", "admin-token-1", map[string]any{"params": map[string]any{"token": secretValue}})
	require.Equal(t, http.StatusAccepted, code, string(resp))
	require.NoError(t, json.Unmarshal(resp, &started))
	done := a.waitStatus(t, started.RunID, "completed", time.Minute)
	require.EqualValues(t, 20, done.Stats.RowsWritten)
	require.FileExists(t, filepath.Join(dir, "out-"+secretValue+".db"), "the pipeline used the secret")

	code, resp = call(a, "POST", "/v1/templates/orders/runs", "admin-token-1", map[string]any{"params": map[string]any{"token": "abc"}})
	require.Equal(t, http.StatusUnprocessableEntity, code, "short secrets are refused: %s", resp)
	code, resp = call(a, "POST", "/v1/templates/orders/runs", "admin-token-1", map[string]any{"pool": "gpu", "params": map[string]any{"token": secretValue}})
	require.Equal(t, http.StatusUnprocessableEntity, code)
	require.Contains(t, string(resp), "pool_override")

	// Tenants: acme may start its run; beta may neither start acme's nor read it.
	code, resp = call(a, "POST", "/v1/tenants/acme/templates/orders/runs", "acme-token-1", map[string]any{"params": map[string]any{"token": secretValue}})
	require.Equal(t, http.StatusAccepted, code, string(resp))
	var tenantRun struct {
		RunID string `json:"run_id"`
	}
	require.NoError(t, json.Unmarshal(resp, &tenantRun))
	code, _ = call(a, "POST", "/v1/tenants/acme/templates/orders/runs", "beta-token-1", map[string]any{"params": map[string]any{"token": secretValue}})
	require.Equal(t, http.StatusForbidden, code)
	code, _ = call(a, "POST", "/v1/tenants/beta/templates/orders/runs", "beta-token-1", map[string]any{"params": map[string]any{"token": secretValue}})
	require.Equal(t, http.StatusForbidden, code, "the template does not list tenant beta")
	code, _ = call(a, "GET", "/v1/runs/"+tenantRun.RunID, "beta-token-1", nil)
	require.Equal(t, http.StatusNotFound, code)
	code, _ = call(a, "GET", "/v1/runs/"+tenantRun.RunID, "acme-token-1", nil)
	require.Equal(t, http.StatusOK, code)
	code, _ = call(a, "POST", "/v1/templates/orders/runs", "acme-token-1", map[string]any{"params": map[string]any{"token": secretValue}})
	require.Equal(t, http.StatusForbidden, code, "tenant principals use their tenant route only")
	a.waitStatus(t, tenantRun.RunID, "completed", time.Minute)

	// The CLI: register from a file, list, run with --param and wait.
	tplFile := filepath.Join(dir, "cli-orders.yaml")
	require.NoError(t, os.WriteFile(tplFile, []byte(strings.Replace(tpl, "/out-", "/cli-", 1)), 0o600))
	conn := []string{"--server", a.url(), "--token", "admin-token-1"}
	r := e2e.Run(t, e2e.Cmd{Args: append([]string{"templates", "register", tplFile, "--id", "cli-orders"}, conn...)})
	require.Equal(t, 0, r.Code, r.String())
	require.Contains(t, r.Stdout, "registered template cli-orders version 1")
	r = e2e.Run(t, e2e.Cmd{Args: append([]string{"templates", "list"}, conn...)})
	require.Equal(t, 0, r.Code, r.String())
	require.Contains(t, r.Stdout, "token:string (secret) (required)")
	r = e2e.Run(t, e2e.Cmd{Args: append([]string{"templates", "run", "cli-orders", "--param", "token=" + secretValue, "--wait"}, conn...)})
	require.Equal(t, 0, r.Code, r.String())
	require.FileExists(t, filepath.Join(dir, "cli-"+secretValue+".db"))
	requireNoSecret(t, "CLI output", r.Stdout+r.Stderr, secretValue)
	r = e2e.Run(t, e2e.Cmd{Args: append([]string{"templates", "run", "cli-orders", "--param", "token"}, conn...)})
	require.Equal(t, 2, r.Code, r.String())
	require.Contains(t, r.Stderr, "--param")

	// Every answer about the runs.
	for _, path := range []string{"/v1/runs/" + started.RunID, "/v1/runs/" + started.RunID + "/config",
		"/v1/runs/" + started.RunID + "/logs", "/v1/runs", "/v1/templates", "/v1/templates/orders", "/v1/audit", "/metrics"} {
		code, resp := call(a, "GET", path, "admin-token-1", nil)
		require.Equal(t, http.StatusOK, code, "%s: %s", path, resp)
	}
	_, cfg := call(a, "GET", "/v1/runs/"+started.RunID+"/config", "admin-token-1", nil)
	require.Contains(t, string(cfg), "${sealed:0}", "the config shows the token")

	// A slow run holds the only slot, so the next sealed run stays pending for server B.
	slow := generateConfig("slow", filepath.Join(dir, "slow.db"), 100000, 50, 10, "")
	code, resp = call(a, "POST", "/v1/runs", "admin-token-1", map[string]any{"config": slow})
	require.Equal(t, http.StatusAccepted, code, string(resp))
	var slowRun struct {
		RunID string `json:"run_id"`
	}
	require.NoError(t, json.Unmarshal(resp, &slowRun))
	a.waitStatus(t, slowRun.RunID, "running", time.Minute)
	code, resp = call(a, "POST", "/v1/templates/orders/runs", "admin-token-1", map[string]any{"params": map[string]any{"token": secretValue}, "run_key": "b"})
	require.Equal(t, http.StatusAccepted, code, string(resp))
	var pending struct {
		RunID string `json:"run_id"`
	}
	require.NoError(t, json.Unmarshal(resp, &pending))
	require.Equal(t, "pending", a.get(t, pending.RunID).Status)
	stderrA := a.stop(t).Stderr

	// The history file holds no plaintext (pending run included: its secret is sealed).
	for _, f := range []string{history, history + "-wal", history + "-shm"} {
		raw, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		requireNoSecret(t, f, string(raw), secretValue)
	}
	requireNoSecret(t, "server log", stderrA, secretValue)
	requireNoSecret(t, "API answers", answers.String(), secretValue)

	// Server B: another key, a copy of the history: the sealed run fails naming key 1.
	copyDir := filepath.Join(dir, "copy")
	require.NoError(t, os.MkdirAll(copyDir, 0o700))
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if raw, err := os.ReadFile(history + suffix); err == nil {
			require.NoError(t, os.WriteFile(filepath.Join(copyDir, "history.db"+suffix), raw, 0o600))
		}
	}
	// Rewrap a second copy under key 2: without key 1 it cannot open, with it every value
	// moves to key 2, after which key 2 alone opens everything.
	wrapDir := filepath.Join(dir, "wrap")
	require.NoError(t, os.MkdirAll(wrapDir, 0o700))
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if raw, err := os.ReadFile(filepath.Join(copyDir, "history.db"+suffix)); err == nil {
			require.NoError(t, os.WriteFile(filepath.Join(wrapDir, "history.db"+suffix), raw, 0o600))
		}
	}
	wrapped := "sqlite:" + filepath.Join(wrapDir, "history.db")
	r = e2e.Run(t, e2e.Cmd{Args: []string{"vault", "rewrap", "--history", wrapped, "--vault-key", k2}})
	require.NotEqual(t, 0, r.Code, r.String())
	require.Contains(t, r.Stderr, v1.KeyID())
	r = e2e.Run(t, e2e.Cmd{Args: []string{"vault", "rewrap", "--history", wrapped, "--vault-key", k2, "--vault-previous-key", k1}})
	require.Equal(t, 0, r.Code, r.String())
	require.Contains(t, r.Stdout, "re-sealed")
	require.NotContains(t, r.Stdout, "re-sealed 0 ")
	r = e2e.Run(t, e2e.Cmd{Args: []string{"vault", "rewrap", "--history", wrapped, "--vault-key", k2}})
	require.Equal(t, 0, r.Code, r.String())
	require.Contains(t, r.Stdout, "re-sealed 0 values")
	requireNoSecret(t, "rewrap output", r.String(), secretValue)

	b := startServe(t, filepath.Join(dir, "data-b"), nil, "--auth-config", auth, "--vault-key", k2,
		"--history", "sqlite:"+filepath.Join(copyDir, "history.db"), "--max-concurrent-runs", "2", "--shutdown-grace-secs", "0")
	b.token = "admin-token-1"
	failed := b.waitStatus(t, pending.RunID, "failed", time.Minute)
	require.NotNil(t, failed.Error)
	require.Equal(t, "vault_key_missing", failed.Error.Code)
	require.Contains(t, failed.Error.Message, v1.KeyID())
	stderrB := b.stop(t).Stderr
	requireNoSecret(t, "server B log", stderrB, secretValue)
}

func requireNoSecret(t *testing.T, where, text, secretValue string) {
	t.Helper()
	for _, form := range []string{secretValue, url.QueryEscape(secretValue), base64.StdEncoding.EncodeToString([]byte(secretValue))} {
		require.NotContains(t, text, form, "%s holds the secret", where)
	}
}

// writeTenantPrincipals writes the --auth-config of the vault tests: an admin and one
// operator for each of the tenants acme and beta.
func writeTenantPrincipals(t *testing.T, dir string) string {
	t.Helper()
	auth := filepath.Join(dir, "principals.yaml")
	require.NoError(t, os.WriteFile(auth, []byte(`- {name: root, token: admin-token-1, role: admin}
- {name: acme-bot, token: acme-token-1, role: operator, tenant: acme}
- {name: beta-bot, token: beta-token-1, role: operator, tenant: beta}
`), 0o600))
	return auth
}

// secretTemplate is the template "orders" with a required secret param token, which
// ends up in the sink's file name dir/out-TOKEN.db: the file proves the run used it.
func secretTemplate(dir string, rows int) string {
	return `version: 1
name: orders
params:
  token: { type: string, secret: true, required: true }
pipeline:
  source: { type: generate, config: { count: ` + strconv.Itoa(rows) + `, batch_size: 10 } }
  sink:
    type: sqlite
    config: { connection_url: "sqlite:` + dir + `/out-${param.token}.db", table_name: rows, write_mode: append, create_table: true }
`
}
