package e2e_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/sluicehq/sluice/tests/e2e"
	"github.com/sluicehq/sluice/tests/testdb"
)

// The tenant-viewer injection of the confinement issue: a template whose SQL query
// compares a column with ${param.day}, run by a tenant principal with a day that would
// close the string and read another tenant's table. Params are bind parameters (SPEC
// §14.2), so the value is compared as data: the run reads nothing, and no row of the
// other table shows in its error, its logs or the sink. Each case runs on a SQLite and a
// PostgreSQL history, against a source of the same kind.

const leaked = "beta-secret-"

// paramsWorld is one server with principals, a source holding events and another
// tenant's table, and a SQLite sink under the data directory's files.
type paramsWorld struct {
	s         *server
	sourceURL string
	sinkDB    string
	injection []string
}

func newParamsWorld(t *testing.T, postgresHistory bool) *paramsWorld {
	t.Helper()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	files := filepath.Join(data, "files") // where served configs may read and write by default
	require.NoError(t, os.MkdirAll(files, 0o755))
	auth := filepath.Join(dir, "principals.yaml")
	require.NoError(t, os.WriteFile(auth, []byte(`- {name: root, token: admin-token-1, role: admin}
- {name: acme-viewer, token: acme-viewer-1, role: viewer, tenant: acme}
- {name: acme-bot, token: acme-token-1, role: operator, tenant: acme}
`), 0o600))
	w := &paramsWorld{sinkDB: filepath.Join(files, "out.db")}
	tables := []string{
		"CREATE TABLE events (day VARCHAR(20), v VARCHAR(50))",
		"INSERT INTO events VALUES ('2026-01-01', 'a'), ('2026-01-02', 'b')",
		"CREATE TABLE other_tenant_table (v VARCHAR(50))",
		"INSERT INTO other_tenant_table VALUES ('" + leaked + "1'), ('" + leaked + "2')",
	}
	args := []string{"--auth-config", auth}
	if postgresHistory {
		src := newPGSchema(t)
		for _, q := range tables {
			src.exec(t, q)
		}
		w.sourceURL = src.url
		w.injection = []string{`x' AND 1=CAST((SELECT string_agg(v, ',') FROM other_tenant_table) AS int) --`}
		args = append(args, "--history", testdb.Postgres(t))
	} else {
		path := filepath.Join(files, "src.db")
		db, err := sql.Open(sqliteshim.ShimName, path)
		require.NoError(t, err)
		for _, q := range tables {
			_, err := db.Exec(q)
			require.NoError(t, err, q)
		}
		require.NoError(t, db.Close())
		w.sourceURL = "sqlite:" + path
		w.injection = []string{`x' AND 1=CAST((SELECT group_concat(v, ',') FROM other_tenant_table) AS int) --`}
	}
	w.injection = append(w.injection, `x' UNION SELECT v, v FROM other_tenant_table --`)
	// The files live in <data-dir>/files, the default allowed dir; name it, since the
	// harness otherwise allows the test root, which keeps the data dir closed.
	w.s = startServe(t, data, nil, append(args, "--allow-path", files)...)
	w.s.token = "admin-token-1"
	return w
}

// template is the events template with query and the declaration of day.
func (w *paramsWorld) template(query, day string) string {
	return fmt.Sprintf(`version: 1
name: events
params:
  day: %s
pipeline:
  source: {type: %s, config: {connection_url: %q, query: %q}}
  sink: {type: sqlite, config: {connection_url: "sqlite:%s", table_name: out, create_table: true}}
`, day, strings.SplitN(w.sourceURL, ":", 2)[0], w.sourceURL, query, w.sinkDB)
}

func (w *paramsWorld) register(t *testing.T, id, config string) (int, apiError) {
	t.Helper()
	var e apiError
	code := w.s.api(t, "POST", "/v1/templates", map[string]any{"id": id, "config": config, "tenants": []string{"acme"}}, &e)
	return code, e
}

// tenantRun starts a run of template id as token on the acme tenant route.
func (w *paramsWorld) tenantRun(t *testing.T, token, id, day string) (int, []byte) {
	t.Helper()
	body, err := json.Marshal(map[string]any{"params": map[string]any{"day": day}})
	require.NoError(t, err)
	return w.s.call(t, "POST", "/v1/tenants/acme/templates/"+id+"/runs", token, body)
}

// sinkText is every value the sink table holds, "" while it does not exist.
func (w *paramsWorld) sinkText(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(w.sinkDB); err != nil {
		return ""
	}
	db, err := sql.Open(sqliteshim.ShimName, w.sinkDB)
	require.NoError(t, err)
	defer db.Close()
	rows, err := db.Query("SELECT * FROM out ORDER BY 1")
	if err != nil {
		return ""
	}
	defer rows.Close()
	var b strings.Builder
	for rows.Next() {
		var day, v sql.NullString
		require.NoError(t, rows.Scan(&day, &v))
		b.WriteString(day.String + "|" + v.String + "\n")
	}
	return b.String()
}

func TestTenantInjectionIsDataSQLiteHistory(t *testing.T) {
	t.Parallel()
	tenantInjectionIsData(t, newParamsWorld(t, false))
}

func TestTenantInjectionIsDataPostgresHistory(t *testing.T) {
	t.Parallel()
	tenantInjectionIsData(t, newParamsWorld(t, true))
}

func tenantInjectionIsData(t *testing.T, w *paramsWorld) {
	code, e := w.register(t, "events", w.template("SELECT day, v FROM events WHERE day = ${param.day}", "{type: string, required: true}"))
	require.Equal(t, http.StatusCreated, code, "%+v", e)

	// A legitimate day reads its row.
	code, resp := w.tenantRun(t, "acme-token-1", "events", "2026-01-02")
	require.Equal(t, http.StatusAccepted, code, string(resp))
	var started struct {
		RunID string `json:"run_id"`
	}
	require.NoError(t, json.Unmarshal(resp, &started))
	r := w.s.waitStatus(t, started.RunID, "completed", time.Minute)
	require.Equal(t, int64(1), r.Stats.RowsRead)

	for _, day := range w.injection {
		for _, token := range []string{"acme-viewer-1", "acme-token-1"} {
			code, resp := w.tenantRun(t, token, "events", day)
			require.NotContains(t, string(resp), leaked)
			if code == http.StatusForbidden {
				continue // refused outright: a tenant viewer only reads (SPEC §14.1)
			}
			require.Equal(t, http.StatusAccepted, code, string(resp))
			require.NoError(t, json.Unmarshal(resp, &started))
			r := w.s.waitStatus(t, started.RunID, "completed", time.Minute)
			require.Zero(t, r.Stats.RowsRead, "the injected day matches no row: it is compared as a value")
			_, runJSON := w.s.call(t, "GET", "/v1/runs/"+started.RunID, w.s.token, nil)
			_, logs := w.s.call(t, "GET", "/v1/runs/"+started.RunID+"/logs", w.s.token, nil)
			require.NotContains(t, string(runJSON), leaked)
			require.NotContains(t, string(logs), leaked)
		}
	}
	require.NotContains(t, w.sinkText(t), leaked)
	require.Equal(t, "2026-01-02|b\n", w.sinkText(t), "only the legitimate run wrote")
}

// TestParamRulesThroughTheAPI: the quoted form of the template is refused when it
// is registered and when a config is submitted, showing the unquoted form; typed and
// constrained params refuse bad values with invalid_params naming the param.
func TestParamRulesThroughTheAPI(t *testing.T) {
	t.Parallel()
	w := newParamsWorld(t, false)

	quoted := w.template("SELECT day, v FROM events WHERE day = '${param.day}'", "{type: string}")
	code, e := w.register(t, "quoted", quoted)
	require.Equal(t, http.StatusUnprocessableEntity, code)
	require.Equal(t, "invalid_config", e.Error.Code)
	require.Len(t, e.Error.Details.Errors, 1)
	require.Equal(t, "pipeline.source.config.query", e.Error.Details.Errors[0].Path)
	require.Contains(t, e.Error.Details.Errors[0].Message, "${param.day} at line 1, column 40 of the query is inside quotes")
	require.Contains(t, e.Error.Details.Errors[0].Message, "write ${param.day} instead of '${param.day}'")
	code = w.s.api(t, "POST", "/v1/runs", map[string]any{"config": quoted}, &e)
	require.Equal(t, http.StatusUnprocessableEntity, code)
	require.Contains(t, e.Error.Message, "write ${param.day} instead of '${param.day}'")

	typed := w.template("SELECT day, v FROM events WHERE day = ${param.day} AND v IN (${param.kind}, ${param.note}) LIMIT ${param.n}",
		"{type: date, min: \"2026-01-01\"}\n  kind: {type: string, enum: [a, b], default: a}\n"+
			"  note: {type: string, pattern: \"[a-z]+\", max_length: 8, default: x}\n  n: {type: int, min: 1, max: 100, default: 10}")
	code, e = w.register(t, "typed", typed)
	require.Equal(t, http.StatusCreated, code, "%+v", e)
	cases := []struct {
		params map[string]any
		param  string
		want   string
	}{
		{map[string]any{"day": w.injection[0]}, "day", "must be a date (YYYY-MM-DD)"},
		{map[string]any{"day": "2025-12-31"}, "day", "must be at least 2026-01-01 (min)"},
		{map[string]any{"day": "2026-01-01", "kind": "c"}, "kind", "must be one of a, b (enum)"},
		{map[string]any{"day": "2026-01-01", "note": "x' --"}, "note", `must match the whole of pattern "[a-z]+"`},
		{map[string]any{"day": "2026-01-01", "note": "abcdefghi"}, "note", "max_length allows 8"},
		{map[string]any{"day": "2026-01-01", "n": 0}, "n", "must be at least 1 (min)"},
		{map[string]any{"day": "2026-01-01", "n": 101}, "n", "must be at most 100 (max)"},
	}
	for _, tc := range cases {
		body, err := json.Marshal(map[string]any{"params": tc.params})
		require.NoError(t, err)
		code, resp := w.s.call(t, "POST", "/v1/tenants/acme/templates/typed/runs", "acme-token-1", body)
		require.Equal(t, http.StatusUnprocessableEntity, code, string(resp))
		var e apiError
		require.NoError(t, json.Unmarshal(resp, &e))
		require.Equal(t, "invalid_params", e.Error.Code, string(resp))
		require.Equal(t, "params."+tc.param, e.Error.Details.Errors[0].Path)
		require.Contains(t, e.Error.Details.Errors[0].Message, tc.want)
	}
	body, err := json.Marshal(map[string]any{"params": map[string]any{"day": "2026-01-01", "kind": "a"}})
	require.NoError(t, err)
	code, resp := w.s.call(t, "POST", "/v1/tenants/acme/templates/typed/runs", "acme-token-1", body)
	require.Equal(t, http.StatusAccepted, code, string(resp))
	var started struct {
		RunID string `json:"run_id"`
	}
	require.NoError(t, json.Unmarshal(resp, &started))
	r := w.s.waitStatus(t, started.RunID, "completed", time.Minute)
	require.Equal(t, int64(1), r.Stats.RowsRead, "a date, a string from the enum and an int limit, all bound")
}

// TestValidateBackfillTemplate: `sluice validate` accepts a template made for backfills,
// its window bound unquoted in the query, and refuses the quoted form with the fix.
func TestValidateBackfillTemplate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name, where string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(`version: 1
name: window
pipeline:
  source: {type: sqlite, config: {connection_url: "sqlite:src.db", query: "SELECT * FROM events WHERE `+where+`"}}
  sink: {type: stdout}
`), 0o600))
		return path
	}
	ok := e2e.Run(t, e2e.Cmd{Args: []string{"validate", write("ok.yaml", "ts >= ${backfill.start} AND ts < ${backfill.end}")}})
	require.Equal(t, 0, ok.Code, ok.String())
	bad := e2e.Run(t, e2e.Cmd{Args: []string{"validate", write("bad.yaml", "ts >= '${backfill.start}'")}})
	require.Equal(t, 2, bad.Code, bad.String())
	require.Contains(t, bad.Stderr, "pipeline.source.config.query: ${backfill.start} at line 1, column 35 of the query is inside quotes")
	require.Contains(t, bad.Stderr, "write ${backfill.start} instead of '${backfill.start}'")
}

// TestBackfillWindowIsBound: a backfill's window and params reach the SQL query of each
// run as bind parameters — the stored run keeps the directives, not the values.
func TestBackfillWindowIsBound(t *testing.T) {
	t.Parallel()
	w := newParamsWorld(t, false)
	code, e := w.register(t, "window", w.template(
		"SELECT day, v FROM events WHERE day >= date(${backfill.start}) AND day < date(${backfill.end}) AND v <> ${param.day}",
		"{type: string, required: true}"))
	require.Equal(t, http.StatusCreated, code, "%+v", e)
	var bf struct {
		Runs []struct {
			RunID string `json:"run_id"`
		} `json:"runs"`
	}
	code = w.s.api(t, "POST", "/v1/backfill", map[string]any{"template": "window", "params": map[string]any{"day": "x' OR 1=1 --"},
		"from": "2026-01-01T00:00:00Z", "to": "2026-01-03T00:00:00Z", "window": "P1D", "max_active": 2}, &bf)
	require.Equal(t, http.StatusAccepted, code)
	require.Len(t, bf.Runs, 2)
	for _, r := range bf.Runs {
		done := w.s.waitStatus(t, r.RunID, "completed", time.Minute)
		require.Equal(t, int64(1), done.Stats.RowsRead, "each window reads its own day")
		var cfg map[string]any
		require.Equal(t, http.StatusOK, w.s.api(t, "GET", "/v1/runs/"+r.RunID+"/config", nil, &cfg))
		raw, err := json.Marshal(cfg)
		require.NoError(t, err)
		require.Contains(t, string(raw), "${param.day}", "the stored query keeps its directives")
		require.NotContains(t, string(raw), "date('2026", "no value was pasted into the query")
	}
	require.Equal(t, "2026-01-01|a\n2026-01-02|b\n", w.sinkText(t))
}
