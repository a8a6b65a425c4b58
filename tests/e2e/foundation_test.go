package e2e_test

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/sluicehq/sluice/tests/e2e"
	"github.com/sluicehq/sluice/tests/fixtures"
)

func TestMain(m *testing.M) { e2e.Main(m) }

// runJSON is the part of `sluice run --json` the tests read.
type runJSON struct {
	Status string `json:"status"`
	Stats  struct {
		RowsRead    int64 `json:"rows_read"`
		RowsWritten int64 `json:"rows_written"`
		Pages       int64 `json:"pages"`
	} `json:"stats"`
	Error *struct{ Code, Message string } `json:"error"`
}

func parseRun(t *testing.T, r e2e.Result) runJSON {
	t.Helper()
	var out runJSON
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &out), r.String())
	return out
}

// writeOrders writes orders.csv with ids from..to; broken makes that id's row unreadable
// and capped gives it an amount of 5000.
func writeOrders(t *testing.T, dir string, from, to int, opts ...func(id int) string) {
	t.Helper()
	path := filepath.Join(dir, "orders.csv")
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	require.NoError(t, err)
	defer f.Close()
	if from == 1 {
		_, err = f.WriteString("id,customer,amount,status\n")
		require.NoError(t, err)
	}
	var b strings.Builder
	for id := from; id <= to; id++ {
		line := fmt.Sprintf("%d,customer-%d,%d.%02d,%s\n", id, id%97, id%900, id%100, []string{"new", "paid", "shipped"}[id%3])
		for _, o := range opts {
			if l := o(id); l != "" {
				line = l
			}
		}
		b.WriteString(line)
	}
	_, err = f.WriteString(b.String())
	require.NoError(t, err)
}

func openDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	db, err := sql.Open(sqliteshim.ShimName, path)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// dump returns every row of table as text, ordered by id.
func dump(t *testing.T, path, table string) []string {
	t.Helper()
	rows, err := openDB(t, path).Query(`SELECT * FROM "` + table + `" ORDER BY CAST(id AS INTEGER)`)
	require.NoError(t, err)
	defer rows.Close()
	cols, err := rows.Columns()
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		require.NoError(t, rows.Scan(ptrs...))
		out = append(out, fmt.Sprint(vals...))
	}
	require.NoError(t, rows.Err())
	return out
}

func count(t *testing.T, path, query string) int {
	t.Helper()
	var n int
	require.NoError(t, openDB(t, path).QueryRow(query).Scan(&n))
	return n
}

// countSoFar is count for a database another process is still writing: 0 while the file
// or the table does not exist yet.
func countSoFar(path, query string) int {
	if _, err := os.Stat(path); err != nil {
		return 0
	}
	conn, err := sql.Open(sqliteshim.ShimName, path)
	if err != nil {
		return 0
	}
	defer conn.Close()
	var n int
	if err := conn.QueryRow(query).Scan(&n); err != nil {
		return 0
	}
	return n
}

var summaryRE = regexp.MustCompile(`^completed: (\d+) rows read, (\d+) written, (\d+) pages, \S+ \(\S+ rows/s\)\n$`)

func TestCSVToSQLiteUpsertTwiceLeavesTableUnchanged(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := e2e.Rows(t, 20000)
	writeOrders(t, dir, 1, n)
	cfg := fixtures.Copy(t, "pipelines/csv_to_sqlite_upsert.yaml", dir)
	db := filepath.Join(dir, "out.db")
	cmd := e2e.Cmd{Args: []string{"run", cfg, "--data-dir", filepath.Join(dir, "data")}, Env: map[string]string{"E2E_DB": db}}

	r := e2e.Run(t, cmd)
	require.Equal(t, 0, r.Code, r.String())
	m := summaryRE.FindStringSubmatch(r.Stdout)
	require.NotNil(t, m, r.String())
	require.Equal(t, fmt.Sprint(n), m[1])
	require.Equal(t, fmt.Sprint(n), m[2])
	require.Equal(t, fmt.Sprint((n+999)/1000), m[3])
	first := dump(t, db, "orders")
	require.Len(t, first, n)
	require.Contains(t, first[0], "customer-1")

	r = e2e.Run(t, cmd)
	require.Equal(t, 0, r.Code, r.String())
	require.Equal(t, first, dump(t, db, "orders"), "upserting the same rows again changes nothing")
	_, err := os.Stat(filepath.Join(dir, "data", "state.json"))
	require.ErrorIs(t, err, os.ErrNotExist, "a full run keeps no state")
}

func TestIncrementalReadsOnlyNewRows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := e2e.Rows(t, 20000)
	writeOrders(t, dir, 1, n)
	cfg := fixtures.Copy(t, "pipelines/csv_incremental.yaml", dir)
	db := filepath.Join(dir, "out.db")
	data := filepath.Join(dir, "data")
	cmd := e2e.Cmd{Args: []string{"run", cfg, "--json"}, Env: map[string]string{"E2E_DB": db, "SLUICE_DATA_DIR": data}}

	res := parseRun(t, e2e.Run(t, cmd))
	require.Equal(t, "completed", res.Status)
	require.Equal(t, int64(n), res.Stats.RowsRead)
	require.Equal(t, int64(n), res.Stats.RowsWritten)

	const added = 37
	writeOrders(t, dir, n+1, n+added)
	res = parseRun(t, e2e.Run(t, cmd))
	require.Equal(t, "completed", res.Status)
	require.Equal(t, int64(added), res.Stats.RowsRead, "only the appended rows are read")
	require.Equal(t, int64(added), res.Stats.RowsWritten)
	require.Equal(t, n+added, count(t, db, "SELECT COUNT(*) FROM orders_log"))
	require.Equal(t, n+added, count(t, db, "SELECT COUNT(DISTINCT id) FROM orders_log"), "no row copied twice")

	res = parseRun(t, e2e.Run(t, cmd))
	require.Zero(t, res.Stats.RowsRead, "nothing new, nothing read")
	require.Equal(t, n+added, count(t, db, "SELECT COUNT(*) FROM orders_log"))

	var st struct {
		Format    int                        `json:"format"`
		Bookmarks map[string]json.RawMessage `json:"bookmarks"`
	}
	raw, err := os.ReadFile(filepath.Join(data, "state.json"))
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(raw, &st))
	require.Equal(t, 2, st.Format)
	require.Contains(t, st.Bookmarks, "_/orders-incremental")
	require.Contains(t, string(st.Bookmarks["_/orders-incremental"]), fmt.Sprint(n+added))
}

func TestInvalidConfigsExit2(t *testing.T) {
	t.Parallel()
	cases := []struct {
		fixture string
		want    []string
		path    string // the path validate --json reports
	}{
		{"invalid/malformed.yaml", []string{"line "}, ""},
		{"invalid/unknown_key.yaml", []string{"pipeline.source.config.batch_sise"}, "pipeline.source.config.batch_sise"},
		{"invalid/unknown_type.yaml", []string{"pipeline.sink.type", "warehouse9000", "file", "sqlite", "stdout"}, "pipeline.sink.type"},
		{"invalid/missing_env.yaml", []string{"${env:E2E_SURELY_UNSET_VAR}", "pipeline.sink.config.connection_url"},
			"pipeline.sink.config.connection_url"},
	}
	for _, tc := range cases {
		t.Run(filepath.Base(tc.fixture), func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			writeOrders(t, dir, 1, 3)
			cfg := fixtures.Copy(t, tc.fixture, dir)
			for _, verb := range []string{"run", "validate"} {
				r := e2e.Run(t, e2e.Cmd{Args: []string{verb, cfg}})
				require.Equal(t, 2, r.Code, r.String())
				require.Empty(t, r.Stdout, r.String())
				for _, w := range tc.want {
					require.Contains(t, r.Stderr, w, r.String())
				}
				require.Contains(t, r.Stderr, "error: "+cfg+": ", "errors are prefixed with the file")
			}

			r := e2e.Run(t, e2e.Cmd{Args: []string{"validate", "--json", cfg}})
			require.Equal(t, 2, r.Code, r.String())
			var v struct {
				Valid  bool `json:"valid"`
				Errors []struct {
					Path    string `json:"path"`
					Message string `json:"message"`
					Line    int    `json:"line"`
				} `json:"errors"`
			}
			require.NoError(t, json.Unmarshal([]byte(r.Stdout), &v), r.String())
			require.False(t, v.Valid)
			require.NotEmpty(t, v.Errors)
			var paths []string
			for _, e := range v.Errors {
				paths = append(paths, e.Path)
				require.NotEmpty(t, e.Message)
			}
			require.Contains(t, paths, tc.path)
			if tc.path == "" {
				require.Positive(t, v.Errors[0].Line, "a syntax error names its line")
			}
		})
	}
}

func TestMalformedYAMLNamesLine(t *testing.T) {
	t.Parallel()
	r := e2e.Run(t, e2e.Cmd{Args: []string{"validate", fixtures.Path("invalid/malformed.yaml")}})
	require.Equal(t, 2, r.Code)
	require.Regexp(t, `line [45]`, r.Stderr, "the unclosed mapping starts on line 4")
}

func TestValidateJSONValid(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeOrders(t, dir, 1, 3)
	cfg := fixtures.Copy(t, "pipelines/csv_to_sqlite_upsert.yaml", dir)
	r := e2e.Run(t, e2e.Cmd{Args: []string{"validate", "--json", cfg}, Env: map[string]string{"E2E_DB": "x.db"}})
	require.Equal(t, 0, r.Code, r.String())
	require.JSONEq(t, `{"valid":true,"errors":[],"warnings":[]}`, r.Stdout)

	r = e2e.Run(t, e2e.Cmd{Args: []string{"validate", cfg}, Env: map[string]string{"E2E_DB": "x.db"}})
	require.Equal(t, 0, r.Code, r.String())
	require.Equal(t, "ok\n", r.Stdout)
}

func TestSinkFailureMidRunNamesPage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	// Row 25 (on page 3 of 10-row pages) breaks the table's CHECK constraint.
	writeOrders(t, dir, 1, 50, func(id int) string {
		if id == 25 {
			return "25,customer-25,5000,new\n"
		}
		return ""
	})
	db := filepath.Join(dir, "out.db")
	_, err := openDB(t, db).Exec(`CREATE TABLE capped (id TEXT, customer TEXT, amount REAL CHECK (amount < 1000), status TEXT)`)
	require.NoError(t, err)
	cfg := fixtures.Copy(t, "pipelines/sqlite_sink_fails.yaml", dir)

	r := e2e.Run(t, e2e.Cmd{Args: []string{"run", cfg}, Env: map[string]string{"E2E_DB": db}})
	require.Equal(t, 1, r.Code, r.String())
	require.Contains(t, r.Stderr, "failed: sink sqlite: page 3: ", r.String())
	require.NotContains(t, r.Stdout+r.Stderr, "completed:")
	require.Equal(t, 20, count(t, db, "SELECT COUNT(*) FROM capped"), "the two confirmed pages stay, page 3 is rolled back")
}

func TestSourceFailureLeavesNoOutputFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeOrders(t, dir, 1, 50, func(id int) string {
		if id == 25 {
			return "25,\"unterminated,1,new\n"
		}
		return ""
	})
	cfg := fixtures.Copy(t, "pipelines/csv_to_file_broken.yaml", dir)
	require.NoError(t, os.Mkdir(filepath.Join(dir, "out"), 0o700))
	r := e2e.Run(t, e2e.Cmd{Args: []string{"run", cfg}})
	require.Equal(t, 1, r.Code, r.String())
	require.Contains(t, r.Stderr, "failed: source file: page 3: ", r.String())
	_, err := os.Stat(filepath.Join(dir, "out", "orders.jsonl"))
	require.ErrorIs(t, err, os.ErrNotExist, "no output that looks complete")
	entries, _ := os.ReadDir(filepath.Join(dir, "out"))
	require.Empty(t, entries, "no temp file left behind")
}

func TestURLCredentialsNeverPrinted(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := fixtures.Copy(t, "pipelines/url_credentials.yaml", dir)
	for _, args := range [][]string{
		{"run", cfg},
		{"run", "--json", cfg},
	} {
		r := e2e.Run(t, e2e.Cmd{Args: args, Env: map[string]string{"SLUICE_LOG_LEVEL": "debug"}})
		require.Equal(t, 1, r.Code, r.String())
		out := r.Stdout + r.Stderr
		require.NotContains(t, out, "hunter2", r.String())
		require.NotContains(t, out, "tok3n", r.String())
		require.Contains(t, out, "source file: page 1: ", r.String())
		require.Contains(t, out, "127.0.0.1:1", "the rest of the URL stays, to find the problem")
	}
	// The file source fetches lazily, so --connect may pass; whatever it says, no secret.
	r := e2e.Run(t, e2e.Cmd{Args: []string{"validate", "--connect", "--json", cfg}})
	require.NotContains(t, r.Stdout+r.Stderr, "hunter2", r.String())
	require.NotContains(t, r.Stdout+r.Stderr, "tok3n", r.String())
}

func TestInterruptStopsAtPageBoundary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := fixtures.Copy(t, "pipelines/generate_slow.yaml", dir)
	db := filepath.Join(dir, "out.db")
	p := e2e.Start(t, e2e.Cmd{Args: []string{"run", cfg}, Env: map[string]string{"E2E_DB": db}})
	require.Eventually(t, func() bool { return strings.Contains(p.Stderr(), "run started") },
		30*time.Second, 20*time.Millisecond)
	// Interrupt once some pages are written, however slowly the machine moves them.
	require.Eventually(t, func() bool { return countSoFar(db, "SELECT COUNT(*) FROM slow") > 0 },
		time.Minute, 20*time.Millisecond)
	p.Signal(t, syscall.SIGINT)
	r := p.Wait(t)
	require.Equal(t, 1, r.Code, r.String())
	require.Contains(t, r.Stderr, "cancelled: ", r.String())
	require.Empty(t, r.Stdout)
	rows := count(t, db, "SELECT COUNT(*) FROM slow")
	require.Positive(t, rows)
	require.Less(t, rows, 1000000)
	require.Zero(t, rows%100, "only whole pages were written")
}
