package e2e_test

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" database/sql driver
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/sluicehq/sluice/tests/testdb"
)

// confineAdmin is the admin token of the principals file the confinement tests serve with.
const confineAdmin = "confine-admin-token-1"

// confined is a server with its own allowed directory, a directory outside it holding a
// secret, a principals file (--auth-config) and a history of the given kind.
type confined struct {
	*server
	dir, allowed, outside, auth, history string
}

// confineHistories are the two histories every confinement case runs on.
var confineHistories = []struct {
	name    string
	history func(t *testing.T, dir string) string
}{
	{"sqlite", func(_ *testing.T, dir string) string { return "sqlite:" + filepath.Join(dir, "data", "history.db") }},
	{"postgres", func(t *testing.T, _ string) string { return testdb.Postgres(t) }},
}

func startConfined(t *testing.T, history func(t *testing.T, dir string) string, extra ...string) *confined {
	t.Helper()
	dir, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	c := &confined{dir: dir, allowed: filepath.Join(dir, "allowed"), outside: filepath.Join(dir, "outside"),
		auth: filepath.Join(dir, "principals.yaml")}
	require.NoError(t, os.MkdirAll(c.allowed, 0o700))
	require.NoError(t, os.MkdirAll(c.outside, 0o700))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "data"), 0o700))
	require.NoError(t, os.WriteFile(filepath.Join(c.outside, "secret.csv"), []byte("k,v\nSLUICE_VAULT_KEY,hush\n"), 0o600))
	require.NoError(t, os.WriteFile(c.auth, []byte("- {name: root, token: "+confineAdmin+", role: admin}\n"), 0o600))
	c.history = history(t, dir)
	args := append([]string{"--auth-config", c.auth, "--history", c.history, "--allow-path", c.allowed}, extra...)
	c.server = startServe(t, filepath.Join(dir, "data"), nil, args...)
	c.token = confineAdmin
	return c
}

// historyState is what a refused config must leave exactly as it was: the history's
// tables and the rows of its runs, audit and run logs, the audit as the API shows it,
// and every file outside the allowed directory and the data directory.
type historyState struct {
	Tables   []string
	Rows     map[string]int64
	AuditAPI int
	Files    []string
}

func (c *confined) state(t *testing.T) historyState {
	t.Helper()
	st := historyState{Rows: map[string]int64{}}
	var audit struct {
		Entries []struct {
			Action string `json:"action"`
		} `json:"entries"`
	}
	require.Equal(t, http.StatusOK, c.api(t, "GET", "/v1/audit?limit=500", nil, &audit))
	st.AuditAPI = len(audit.Entries)
	st.Tables, st.Rows = historyTables(t, c.history)
	data := filepath.Join(c.dir, "data")
	require.NoError(t, filepath.WalkDir(c.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == data || p == c.allowed {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			st.Files = append(st.Files, p)
		}
		return nil
	}))
	return st
}

// historyTables lists the history's tables and counts the rows of those a hostile sink
// would aim at.
func historyTables(t *testing.T, history string) ([]string, map[string]int64) {
	t.Helper()
	ctx := context.Background()
	driver, dsn := "pgx", history
	list := "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() ORDER BY 1"
	if strings.HasPrefix(history, "sqlite:") {
		driver, dsn = sqliteshim.ShimName, strings.TrimPrefix(history, "sqlite:")+"?_pragma=query_only(1)"
		list = "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"
	}
	db, err := sql.Open(driver, dsn)
	require.NoError(t, err)
	defer db.Close()
	rs, err := db.QueryContext(ctx, list)
	require.NoError(t, err)
	var tables []string
	for rs.Next() {
		var n string
		require.NoError(t, rs.Scan(&n))
		tables = append(tables, n)
	}
	require.NoError(t, rs.Err())
	rows := map[string]int64{}
	for _, tb := range []string{"sluice_runs", "sluice_audit", "sluice_run_logs"} {
		var n int64
		require.NoError(t, db.QueryRowContext(ctx, "SELECT count(*) FROM "+tb).Scan(&n), tb)
		rows[tb] = n
	}
	return tables, rows
}

// pgSchemaOf is the search_path schema of a PostgreSQL URL.
func pgSchemaOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	return u.Query().Get("search_path")
}

// withoutSearchPath is raw with its search_path removed.
func withoutSearchPath(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	require.NoError(t, err)
	q := u.Query()
	q.Del("search_path")
	u.RawQuery = q.Encode()
	return u.String()
}

func pipelineYAML(name, source, sink string) string {
	return fmt.Sprintf("version: 1\nname: %s\npipeline:\n  source: %s\n  sink: %s\n", name, source, sink)
}

// Every way a submitted config could reach the server's secrets, its history or its
// network is refused at submit with the code, naming the key and the flag, on SQLite and
// PostgreSQL histories, and leaves the history, the audit and the filesystem unchanged.
func TestConfinementRefusesAtSubmit(t *testing.T) {
	t.Parallel()
	for _, h := range confineHistories {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			c := startConfined(t, h.history)
			require.NoError(t, os.Symlink(filepath.Join(c.outside, "secret.csv"), filepath.Join(c.allowed, "escape.csv")))
			require.NoError(t, os.WriteFile(filepath.Join(c.allowed, "in.csv"), []byte("id\n1\n"), 0o600))
			// One run that completes, so the history has rows and the audit entries to lose.
			ok := c.submit(t, map[string]any{"config": pipelineYAML("fine",
				`{type: file, config: {path: in.csv}}`, `{type: file, config: {path: out.csv}}`)})
			c.waitStatus(t, ok, "completed", time.Minute)
			require.FileExists(t, filepath.Join(c.allowed, "out.csv"), "a relative path lands in the first --allow-path directory")

			stdout := `{type: stdout}`
			historyFile := filepath.Join(c.dir, "data", "history.db")
			cases := []struct {
				name, config, code, key, flag string
			}{
				{"proc environ", pipelineYAML("environ", `{type: file, config: {path: /proc/self/environ, format: csv}}`, stdout),
					"path_refused", "pipeline.source.config.path", "--allow-path"},
				{"auth config", pipelineYAML("principals", fmt.Sprintf(`{type: file, config: {path: %q, format: csv}}`, c.auth), stdout),
					"path_refused", "pipeline.source.config.path", "--auth-config"},
				{"etc passwd", pipelineYAML("passwd", `{type: file, config: {path: /etc/passwd, format: csv}}`, stdout),
					"path_refused", "pipeline.source.config.path", "--allow-path"},
				{"symlink out of the allowed dir", pipelineYAML("escape", `{type: file, config: {path: escape.csv}}`, stdout),
					"path_refused", "pipeline.source.config.path", "--allow-path"},
				{"file sink outside", pipelineYAML("drop", `{type: generate, config: {count: 1}}`,
					fmt.Sprintf(`{type: file, config: {path: %q, format: jsonl}}`, filepath.Join(c.outside, "principals.yaml"))),
					"path_refused", "pipeline.sink.config.path", "--allow-path"},
				{"file sink escaping with ..", pipelineYAML("dotdot", `{type: generate, config: {count: 1}}`,
					`{type: file, config: {path: ../outside/planted.jsonl}}`),
					"path_refused", "pipeline.sink.config.path", "--allow-path"},
				{"metadata address", pipelineYAML("metadata",
					`{type: postgres, config: {connection_url: "postgres://u:p@169.254.169.254:5432/db", query: "SELECT 1"}}`, stdout),
					"host_refused", "pipeline.source.config.connection_url", "--allow-host"},
				{"file over http to the metadata service", pipelineYAML("imds",
					`{type: file, config: {path: "http://[::ffff:169.254.169.254]/latest/meta-data/", format: jsonl}}`, stdout),
					"host_refused", "pipeline.source.config.path", "--allow-host"},
				{"sqlite sink on the history", pipelineYAML("audit-wipe", `{type: generate, config: {count: 1}}`,
					fmt.Sprintf(`{type: sqlite, config: {connection_url: "sqlite:%s", table_name: sluice_audit, write_mode: overwrite}}`, historyFile)),
					map[bool]string{true: "history_refused", false: "path_refused"}[h.name == "sqlite"],
					"pipeline.sink.config.connection_url", "--allow-path"},
				{"sqlite source reading the run logs", pipelineYAML("logs",
					fmt.Sprintf(`{type: sqlite, config: {connection_url: "sqlite:%s-wal", query: "SELECT 1"}}`, historyFile), stdout),
					map[bool]string{true: "history_refused", false: "path_refused"}[h.name == "sqlite"],
					"pipeline.source.config.connection_url", "--allow-path"},
			}
			if h.name == "postgres" {
				schema := pgSchemaOf(t, c.history)
				cases = append(cases,
					struct{ name, config, code, key, flag string }{"postgres sink on the history", pipelineYAML("pg-audit-wipe",
						`{type: generate, config: {count: 1}}`,
						fmt.Sprintf(`{type: postgres, config: {connection_url: %q, table_name: sluice_audit, write_mode: overwrite}}`, c.history)),
						"history_refused", "pipeline.sink.config.connection_url", "--allow-host"},
					struct{ name, config, code, key, flag string }{"postgres sink on the history's schema by name", pipelineYAML("pg-audit-wipe-2",
						`{type: generate, config: {count: 1}}`,
						fmt.Sprintf(`{type: postgres, config: {connection_url: %q, table_name: %s.sluice_audit, write_mode: overwrite}}`,
							strings.Replace(withoutSearchPath(t, c.history), "127.0.0.1", "localhost", 1), schema)),
						"history_refused", "pipeline.sink.config.connection_url", "--allow-host"},
					struct{ name, config, code, key, flag string }{"postgres sink with the history's schema in options", pipelineYAML("pg-audit-wipe-3",
						`{type: generate, config: {count: 1}}`,
						fmt.Sprintf(`{type: postgres, config: {connection_url: %q, table_name: sluice_audit, write_mode: overwrite}}`,
							withoutSearchPath(t, c.history)+"&options="+url.QueryEscape("-c search_path="+schema))),
						"history_refused", "pipeline.sink.config.connection_url", "--allow-host"},
				)
			}
			before := c.state(t)
			for _, tc := range cases {
				var e apiError
				code := c.api(t, "POST", "/v1/runs", map[string]any{"config": tc.config}, &e)
				require.Equal(t, http.StatusUnprocessableEntity, code, "%s: %+v", tc.name, e)
				require.Equal(t, tc.code, e.Error.Code, "%s: %s", tc.name, e.Error.Message)
				require.Contains(t, e.Error.Message, tc.key, tc.name)
				require.Contains(t, e.Error.Message, tc.flag, tc.name)
				require.NotContains(t, e.Error.Message, "u:p@", "%s: credentials never appear", tc.name)
			}
			require.Equal(t, before, c.state(t), "refusals change nothing in the history, the audit or the filesystem")
			require.NoFileExists(t, filepath.Join(c.outside, "principals.yaml"))
			require.NoFileExists(t, filepath.Join(c.outside, "planted.jsonl"))
		})
	}
}

// A path that passed at submit is judged again when the connector opens it: a symlink
// re-pointed out of the allowed directory while the run waited makes the run fail with
// path_refused, reading nothing.
func TestConfinementRefusesAtOpen(t *testing.T) {
	t.Parallel()
	for _, h := range confineHistories {
		t.Run(h.name, func(t *testing.T) {
			t.Parallel()
			c := startConfined(t, h.history, "--max-concurrent-runs", "1")
			require.NoError(t, os.WriteFile(filepath.Join(c.allowed, "in.csv"), []byte("id\n1\n"), 0o600))
			link := filepath.Join(c.allowed, "link.csv")
			require.NoError(t, os.Symlink(filepath.Join(c.allowed, "in.csv"), link))
			// The only slot is busy with a slow run, so the next one waits pending.
			slow := c.submit(t, map[string]any{"config": pipelineYAML("slow", `{type: generate, config: {count: 100000, rate: 10}}`, `{type: stdout}`)})
			c.waitStatus(t, slow, "running", time.Minute)
			id := c.submit(t, map[string]any{"config": pipelineYAML("swapped", `{type: file, config: {path: link.csv}}`,
				`{type: file, config: {path: copy.csv}}`)})
			require.Equal(t, "pending", c.get(t, id).Status)
			require.NoError(t, os.Remove(link))
			require.NoError(t, os.Symlink(filepath.Join(c.outside, "secret.csv"), link))
			require.Equal(t, http.StatusAccepted, c.api(t, "POST", "/v1/runs/"+slow+"/cancel", nil, nil))
			r := c.waitStatus(t, id, "failed", time.Minute)
			require.NotNil(t, r.Error)
			require.Equal(t, "path_refused", r.Error.Code, r.Error.Message)
			require.Contains(t, r.Error.Message, "pipeline.source.config.path")
			require.Zero(t, r.Stats.RowsRead)
			require.NoFileExists(t, filepath.Join(c.allowed, "copy.csv"))
			entries, err := os.ReadDir(c.outside)
			require.NoError(t, err)
			require.Equal(t, []string{"secret.csv"}, names(entries))
		})
	}
}

func names(entries []os.DirEntry) []string {
	out := make([]string, 0, len(entries))
	for _, e := range entries {
		out = append(out, e.Name())
	}
	slices.Sort(out)
	return out
}
