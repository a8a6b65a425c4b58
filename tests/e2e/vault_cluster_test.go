package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/vault"
	"github.com/sluicehq/sluice/tests/e2e"
	"github.com/sluicehq/sluice/tests/testdb"
)

// Vault on a PostgreSQL cluster (SPEC §7): member A takes a template run with a secret
// param, member B (the only one serving its pool) claims and uses the secret; a member
// without the key fails a sealed run naming the key. Afterwards the plaintext is in no
// row of the history database, no member's log, no API answer and no /metrics page.
// Tenant principals stay apart across members.
func TestVaultOnAPostgresCluster(t *testing.T) {
	t.Parallel()
	history := testdb.Postgres(t)
	dir := t.TempDir()
	const secretValue = "Cl0ud-S3cret-Passw0rd-77"
	auth := writeTenantPrincipals(t, dir)
	key := newVaultKey(t)
	v, err := vault.FromBase64(key)
	require.NoError(t, err)

	cfg := clusterConfig(history, 5)
	cfg.Token, cfg.AuthConfig = "admin-token-1", auth
	c := e2e.StartCluster(t, 2, cfg, func(i int, mc *e2e.MemberConfig) {
		mc.Extra = append(mc.Extra, "--vault-key", key)
		if i == 0 {
			mc.Pools = []string{"intake"} // A never claims default-pool runs
		}
	})
	a, b := c.Members[0], c.Members[1]

	var answers bytes.Buffer // every API answer, searched for the secret at the end
	as := func(m *e2e.Member, token string) *e2e.Member {
		cp := *m
		cp.Config.Token = token
		return &cp
	}
	call := func(m *e2e.Member, method, path string, body any) (int, []byte) {
		t.Helper()
		code, resp, err := m.Do(method, path, body)
		require.NoError(t, err)
		answers.Write(resp)
		return code, resp
	}
	tpl := secretTemplate(dir, 30)
	code, resp := call(a, "POST", "/v1/templates", map[string]any{"id": "orders", "config": tpl, "tenants": []string{"acme"}})
	require.Equal(t, http.StatusCreated, code, string(resp))

	type started struct {
		RunID string `json:"run_id"`
	}
	var run started
	code, resp = call(a, "POST", "/v1/templates/orders/runs", map[string]any{"params": map[string]any{"token": secretValue}})
	require.Equal(t, http.StatusAccepted, code, string(resp))
	require.NoError(t, json.Unmarshal(resp, &run))
	done := c.WaitTerminal(t, []string{run.RunID}, time.Minute)[run.RunID]
	require.Equal(t, "completed", done.Status, "%+v", done.Error)
	require.EqualValues(t, 30, done.Stats.RowsWritten)
	require.Len(t, done.Attempts, 1)
	require.Equal(t, b.InstanceID(t), done.Attempts[0].InstanceID, "member B claimed the run A took")
	require.FileExists(t, filepath.Join(dir, "out-"+secretValue+".db"), "the pipeline used the secret")

	// Tenants, across members: acme starts on A and reads on B; beta can do neither.
	var tenantRun started
	code, resp = call(as(a, "acme-token-1"), "POST", "/v1/tenants/acme/templates/orders/runs", map[string]any{"params": map[string]any{"token": secretValue}})
	require.Equal(t, http.StatusAccepted, code, string(resp))
	require.NoError(t, json.Unmarshal(resp, &tenantRun))
	code, _ = call(as(b, "beta-token-1"), "POST", "/v1/tenants/acme/templates/orders/runs", map[string]any{"params": map[string]any{"token": secretValue}})
	require.Equal(t, http.StatusForbidden, code)
	code, _ = call(as(b, "beta-token-1"), "GET", "/v1/runs/"+tenantRun.RunID, nil)
	require.Equal(t, http.StatusNotFound, code)
	code, _ = call(as(b, "acme-token-1"), "GET", "/v1/runs/"+tenantRun.RunID, nil)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "completed", c.WaitTerminal(t, []string{tenantRun.RunID}, time.Minute)[tenantRun.RunID].Status)

	for _, m := range c.Members {
		for _, path := range []string{"/v1/runs/" + run.RunID, "/v1/runs/" + run.RunID + "/config",
			"/v1/runs/" + run.RunID + "/logs", "/v1/runs", "/v1/templates/orders", "/readyz", "/metrics"} {
			code, resp := call(m, "GET", path, nil)
			require.Equal(t, http.StatusOK, code, "%s %s: %s", m.Name, path, resp)
		}
	}

	// B leaves; C joins without the key and fails the next sealed run naming A's key.
	b.Term(t)
	b.Wait(t)
	noKey := cfg
	noKey.Cluster = true
	cMember := e2e.StartMember(t, "m2", noKey)
	cMember.WaitReady(t, 30*time.Second)
	var sealed started
	code, resp = call(a, "POST", "/v1/templates/orders/runs", map[string]any{"params": map[string]any{"token": secretValue}, "run_key": "no-key"})
	require.Equal(t, http.StatusAccepted, code, string(resp))
	require.NoError(t, json.Unmarshal(resp, &sealed))
	failed := cMember.WaitRun(t, sealed.RunID, time.Minute, "failed", func(r e2e.RunResource) bool { return r.Terminal() })
	require.Equal(t, "failed", failed.Status)
	require.NotNil(t, failed.Error)
	require.Equal(t, "vault_key_missing", failed.Error.Code)
	require.Contains(t, failed.Error.Message, v.KeyID())
	require.Contains(t, failed.Error.Message, "--vault-key")
	code, resp = call(cMember, "GET", "/v1/runs/"+sealed.RunID, nil)
	require.Equal(t, http.StatusOK, code, string(resp))

	requireNoSecret(t, "API answers", answers.String(), secretValue)
	for _, m := range []*e2e.Member{a, b, cMember} {
		requireNoSecret(t, m.Name+" log", m.Stderr(), secretValue)
	}
	requireNoSecret(t, "history database", dumpSchema(t, history), secretValue)
}

// dumpSchema renders every row of every table in the URL's search_path schema as text.
func dumpSchema(t *testing.T, url string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.NotEmpty(t, tables)
	var out bytes.Buffer
	seen := 0
	for _, table := range tables {
		rows, err := conn.Query(ctx, `SELECT t::text FROM `+pgx.Identifier{table}.Sanitize()+` t`)
		require.NoError(t, err)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err, table)
		for _, l := range lines {
			out.WriteString(l)
			out.WriteByte('\n')
		}
		seen += len(lines)
	}
	require.Positive(t, seen, "the dump read the history")
	return out.String()
}
