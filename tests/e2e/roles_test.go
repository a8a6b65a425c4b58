package e2e_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/sluicehq/sluice/tests/testdb"
)

// The roles, approval and sealing rules of SPEC §14.1 and §9.5 through the real binary,
// on a SQLite and on a PostgreSQL history.
func TestRolesApprovalsAndSealing_SQLite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := filepath.Join(dir, "history.db")
	rolesScenario(t, dir, "sqlite:"+db, func(t *testing.T) outboxRows {
		conn, err := sql.Open(sqliteshim.ShimName, db)
		require.NoError(t, err)
		defer conn.Close()
		rows, err := conn.Query("SELECT url, payload FROM sluice_outbox")
		require.NoError(t, err)
		defer rows.Close()
		var out outboxRows
		for rows.Next() {
			var u, p string
			require.NoError(t, rows.Scan(&u, &p))
			out = append(out, [2]string{u, p})
		}
		require.NoError(t, rows.Err())
		return out
	}, func(t *testing.T) []string {
		var files []string
		for _, f := range []string{db, db + "-wal", db + "-shm"} {
			if raw, err := os.ReadFile(f); err == nil {
				files = append(files, string(raw))
			}
		}
		return files
	})
}

func TestRolesApprovalsAndSealing_Postgres(t *testing.T) {
	t.Parallel()
	history := testdb.Postgres(t)
	query := func(t *testing.T, q string) [][]string {
		ctx := context.Background()
		conn, err := pgx.Connect(ctx, history)
		require.NoError(t, err)
		defer conn.Close(ctx)
		rows, err := conn.Query(ctx, q)
		require.NoError(t, err)
		defer rows.Close()
		var out [][]string
		for rows.Next() {
			vals, err := rows.Values()
			require.NoError(t, err)
			row := make([]string, len(vals))
			for i, v := range vals {
				row[i] = fmt.Sprint(v)
			}
			out = append(out, row)
		}
		require.NoError(t, rows.Err())
		return out
	}
	rolesScenario(t, t.TempDir(), history, func(t *testing.T) outboxRows {
		var out outboxRows
		for _, r := range query(t, "SELECT url, payload FROM sluice_outbox") {
			out = append(out, [2]string{r[0], r[1]})
		}
		return out
	}, func(t *testing.T) []string {
		// The history "dump": every text the run, audit, template and outbox tables hold.
		var texts []string
		for _, table := range []string{"sluice_runs", "sluice_audit", "sluice_templates", "sluice_outbox", "sluice_run_logs"} {
			for _, r := range query(t, "SELECT * FROM "+table) {
				texts = append(texts, strings.Join(r, "|"))
			}
		}
		return texts
	})
}

type outboxRows [][2]string

// rolesPrincipals: an admin, two operators (so approvals can be required), and a viewer
// and an operator of tenant acme.
func rolesPrincipals(t *testing.T, dir string) string {
	t.Helper()
	auth := filepath.Join(dir, "principals.yaml")
	require.NoError(t, os.WriteFile(auth, []byte(`- {name: root, token: admin-token-1, role: admin}
- {name: otto, token: otto-token-1, role: operator}
- {name: vera, token: vera-token-1, role: operator}
- {name: acme-viewer, token: acme-viewer-token-1, role: viewer, tenant: acme}
- {name: acme-bot, token: acme-op-token-1, role: operator, tenant: acme}
`), 0o600))
	return auth
}

func rolesScenario(t *testing.T, dir, history string, outbox func(*testing.T) outboxRows, dump func(*testing.T) []string) {
	const secretValue = "Tok3n-0f-The-Tenant-77"
	const cbPassword = "cb-Passw0rd-99"
	auth := rolesPrincipals(t, dir)
	key := newVaultKey(t)
	data := filepath.Join(dir, "data")
	a := startServe(t, data, nil, "--auth-config", auth, "--vault-key", key, "--history", history,
		"--shutdown-grace-secs", "0")
	a.token = "admin-token-1"
	call := func(s *server, method, path, token string, body any) (int, []byte) {
		var raw []byte
		if body != nil {
			var err error
			raw, err = json.Marshal(body)
			require.NoError(t, err)
		}
		return s.call(t, method, path, token, raw)
	}
	auditCount := func(s *server) int {
		var out struct {
			Entries []json.RawMessage `json:"entries"`
		}
		code, resp := call(s, "GET", "/v1/audit?limit=500", "admin-token-1", nil)
		require.Equal(t, http.StatusOK, code, string(resp))
		require.NoError(t, json.Unmarshal(resp, &out))
		return len(out.Entries)
	}
	runCount := func(s *server) int {
		var out struct {
			Runs []runResource `json:"runs"`
		}
		code, resp := call(s, "GET", "/v1/runs?limit=500", "admin-token-1", nil)
		require.Equal(t, http.StatusOK, code, string(resp))
		require.NoError(t, json.Unmarshal(resp, &out))
		return len(out.Runs)
	}
	errCode := func(resp []byte) string {
		var e apiError
		require.NoError(t, json.Unmarshal(resp, &e), string(resp))
		return e.Error.Code
	}

	// A secret param in the template's name is refused at register; nothing changes.
	before := auditCount(a)
	misplaced := `version: 1
name: "orders-${param.token}"
params:
  token: { type: string, secret: true, required: true }
pipeline:
  source: { type: generate, config: { count: 1 } }
  sink: { type: stdout }
`
	code, resp := call(a, "POST", "/v1/templates", "admin-token-1", map[string]any{"id": "leaky", "config": misplaced})
	require.Equal(t, http.StatusUnprocessableEntity, code, string(resp))
	require.Equal(t, "secret_param_misplaced", errCode(resp))
	require.Contains(t, string(resp), `"path":"name"`)
	// ... and at run, for a config submitted with its params.
	code, resp = call(a, "POST", "/v1/runs", "admin-token-1", map[string]any{"config": misplaced,
		"params": map[string]any{"token": secretValue}})
	require.NotEqual(t, http.StatusAccepted, code, string(resp))
	require.NotContains(t, string(resp), secretValue)
	require.Equal(t, before, auditCount(a), "a refusal writes no audit entry")
	require.Zero(t, runCount(a))
	code, resp = call(a, "GET", "/v1/templates/leaky", "admin-token-1", nil)
	require.Equal(t, http.StatusNotFound, code, string(resp))

	// A template of tenant acme whose rows reach the stdout sink. The CSV holds the
	// secret value itself: the sink must mask it in the server's output.
	csv := filepath.Join(dir, "rows.csv")
	require.NoError(t, os.WriteFile(csv, []byte("id,v\n1,plain\n2,"+secretValue+"\n"), 0o600))
	tpl := `version: 1
name: orders
params:
  token: { type: string, secret: true, required: true }
pipeline:
  source: { type: file, config: { path: "` + csv + `" } }
  sink: { type: stdout }
`
	code, resp = call(a, "POST", "/v1/templates", "admin-token-1", map[string]any{"id": "orders", "config": tpl, "tenants": []string{"acme"}})
	require.Equal(t, http.StatusCreated, code, string(resp))
	params := map[string]any{"token": secretValue}
	for field, extra := range map[string]map[string]any{
		"run_key": {"run_key": "rk-" + secretValue},
		"labels":  {"labels": map[string]string{"owner": secretValue}},
	} {
		body := map[string]any{"params": params}
		for k, v := range extra {
			body[k] = v
		}
		code, resp = call(a, "POST", "/v1/templates/orders/runs", "admin-token-1", body)
		require.Equal(t, http.StatusUnprocessableEntity, code, "%s: %s", field, resp)
		require.Equal(t, "secret_param_misplaced", errCode(resp), field)
		require.NotContains(t, string(resp), secretValue, field)
	}

	// A tenant viewer reads its tenant's templates but may not run them; its operator may.
	code, resp = call(a, "GET", "/v1/templates", "acme-viewer-token-1", nil)
	require.Equal(t, http.StatusOK, code, string(resp))
	require.Contains(t, string(resp), `"orders"`)
	code, resp = call(a, "POST", "/v1/tenants/acme/templates/orders/runs", "acme-viewer-token-1", map[string]any{"params": params})
	require.Equal(t, http.StatusForbidden, code, string(resp))
	require.Zero(t, runCount(a), "the refused request created nothing")
	code, resp = call(a, "POST", "/v1/tenants/acme/templates/orders/runs", "acme-op-token-1", map[string]any{"params": params})
	require.Equal(t, http.StatusAccepted, code, string(resp))
	var started struct {
		RunID string `json:"run_id"`
	}
	require.NoError(t, json.Unmarshal(resp, &started))
	a.waitStatus(t, started.RunID, "completed", time.Minute)
	require.Eventually(t, func() bool { return strings.Contains(a.Stdout(), `"v":"plain"`) }, time.Minute, 20*time.Millisecond,
		"the stdout sink printed the rows:\n%s", a.Stdout())
	require.Equal(t, 2, strings.Count(a.Stdout(), `{"id":`), a.Stdout())
	requireNoSecret(t, "the stdout sink's output", a.Stdout(), secretValue)
	code, resp = call(a, "GET", "/v1/runs/"+started.RunID, "acme-viewer-token-1", nil)
	require.Equal(t, http.StatusOK, code, "a tenant viewer reads its tenant's runs: %s", resp)
	requireNoSecret(t, "the run resource", string(resp), secretValue)

	// A callback with credentials in its URL to a receiver that is down: the outbox row
	// stays, sealed.
	hook := "http://hookuser:" + cbPassword + "@" + freeAddr(t) + "/hook"
	id := a.submit(t, map[string]any{"config": generateConfig("callbacks-private", filepath.Join(dir, "cb.db"), 3, 0, 3, ""),
		"callback": map[string]any{"url": hook}})
	a.waitStatus(t, id, "completed", time.Minute)
	var rows outboxRows
	require.Eventually(t, func() bool { rows = outbox(t); return len(rows) > 0 }, time.Minute, 50*time.Millisecond)
	for _, r := range rows {
		require.Equal(t, "sealed:", r[0], "the URL is not kept in clear")
		for _, clear := range []string{cbPassword, "hookuser", "/hook", "callbacks-private", id} {
			require.NotContains(t, r[1], clear, "the payload is sealed")
		}
	}
	// A sealed row is opened by the member that delivers it: a live receiver gets the
	// real payload, with the URL's credentials as Basic auth.
	got := make(chan string, 1)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if user, pw, ok := r.BasicAuth(); ok && user == "hookuser" && pw == cbPassword {
			raw, _ := io.ReadAll(r.Body)
			select {
			case got <- string(raw):
			default:
			}
		}
	}))
	defer recv.Close()
	live := strings.Replace(recv.URL, "http://", "http://hookuser:"+cbPassword+"@", 1) + "/hook"
	id = a.submit(t, map[string]any{"config": generateConfig("callbacks-live", filepath.Join(dir, "cb2.db"), 3, 0, 3, ""),
		"callback": map[string]any{"url": live}})
	select {
	case body := <-got:
		require.Contains(t, body, `"run_id":"`+id+`"`)
		require.Contains(t, body, `"name":"callbacks-live"`)
	case <-time.After(30 * time.Second):
		t.Fatal("the sealed callback was not delivered")
	}
	a.stop(t)

	// Under --require-approval run a backfill becomes one change request and no run;
	// approval creates its windows. Secret params cannot wait for approval.
	b := startServe(t, data, nil, "--auth-config", auth, "--vault-key", key, "--history", history,
		"--shutdown-grace-secs", "0", "--require-approval", "run")
	b.token = "admin-token-1"
	runsBefore := runCount(b)
	bf := map[string]any{"config": generateConfig("bf", filepath.Join(dir, "bf-${backfill.start}.db"), 2, 0, 2, ""),
		"from": "2026-03-01T00:00:00Z", "to": "2026-03-03T00:00:00Z", "window": "P1D"}
	code, resp = call(b, "POST", "/v1/backfill", "otto-token-1", bf)
	require.Equal(t, http.StatusAccepted, code, string(resp))
	var proposed struct {
		ChangeRequestID string            `json:"change_request_id"`
		Status          string            `json:"status"`
		Runs            []json.RawMessage `json:"runs"`
	}
	require.NoError(t, json.Unmarshal(resp, &proposed))
	require.Equal(t, "proposed", proposed.Status)
	require.NotEmpty(t, proposed.ChangeRequestID)
	require.Empty(t, proposed.Runs)
	require.Equal(t, runsBefore, runCount(b), "no run before approval")
	code, resp = call(b, "POST", "/v1/templates/orders/runs", "otto-token-1", map[string]any{"params": params})
	require.Equal(t, http.StatusUnprocessableEntity, code, string(resp))
	require.Equal(t, "secret_params_refused", errCode(resp))
	code, resp = call(b, "POST", "/v1/change-requests/"+proposed.ChangeRequestID+"/approve", "vera-token-1", nil)
	require.Equal(t, http.StatusOK, code, string(resp))
	require.Eventually(t, func() bool { return runCount(b) == runsBefore+2 }, time.Minute, 50*time.Millisecond,
		"approval created both windows")
	b.stop(t)

	for i, text := range dump(t) {
		requireNoSecret(t, fmt.Sprintf("history part %d", i), text, secretValue)
		require.NotContains(t, text, cbPassword, "history part %d", i)
	}
}
