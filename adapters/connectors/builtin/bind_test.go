package builtin_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "github.com/go-sql-driver/mysql" // the MariaDB side of the fixture
	_ "github.com/jackc/pgx/v5/stdlib" // the PostgreSQL side of the fixture
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/sluicehq/sluice/adapters/configtext"
	"github.com/sluicehq/sluice/adapters/connectors/builtin"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/state"
	"github.com/sluicehq/sluice/tests/testdb"
)

// hostile are values that would end a string literal, comment out the rest of the query,
// end the statement or look like a placeholder if they were pasted into the SQL text.
// Read as bind parameters they are data: each selects its own row and nothing else.
var hostile = []string{
	`x' OR '1'='1`,
	`x' AND 1=CAST((SELECT string_agg(s, ',') FROM t) AS int) --`,
	`'; DROP TABLE t; --`,
	`$1`,
	`a'b"c\'d -- e; f $2 ?`,
	`` + "`" + `x` + "`" + ` /* y */ # z`,
}

// bindDB is one database of the test: the connection_url for the config, the table's
// creation SQL and a database/sql handle for setting it up.
type bindDB struct {
	typ, url string
	db       *sql.DB
}

func bindDatabases(t *testing.T) []bindDB {
	t.Helper()
	dir := t.TempDir()
	lite, err := sql.Open(sqliteshim.ShimName, filepath.Join(dir, "b.db"))
	require.NoError(t, err)
	t.Cleanup(func() { lite.Close() })
	out := []bindDB{{typ: "sqlite", url: "sqlite:" + filepath.Join(dir, "b.db"), db: lite}}

	pgURL := testdb.Postgres(t)
	pg, err := sql.Open("pgx", pgURL)
	require.NoError(t, err)
	t.Cleanup(func() { pg.Close() })
	out = append(out, bindDB{typ: "postgres", url: pgURL, db: pg})

	myURL := testdb.MySQL(t)
	cfg, err := testdb.ParseMySQL(myURL)
	require.NoError(t, err)
	my, err := sql.Open("mysql", cfg.FormatDSN())
	require.NoError(t, err)
	t.Cleanup(func() { my.Close() })
	return append(out, bindDB{typ: "mysql", url: myURL, db: my})
}

// fill creates t(id, s, d) with one row per hostile value and a few plain ones.
func (b bindDB) fill(t *testing.T) []string {
	t.Helper()
	_, err := b.db.Exec(`CREATE TABLE t (id INTEGER PRIMARY KEY, s VARCHAR(200), d DATE)`)
	require.NoError(t, err)
	values := append([]string{"plain", "x", ""}, hostile...)
	ph := "?, ?, ?"
	if b.typ == "postgres" {
		ph = "$1, $2, $3"
	}
	for i, v := range values {
		_, err := b.db.Exec("INSERT INTO t (id, s, d) VALUES ("+ph+")", i+1, v, fmt.Sprintf("2026-01-%02d", i+1))
		require.NoError(t, err)
	}
	return values
}

func loadSource(t *testing.T, typ, url, query string, params map[string]string, extra string) (*pipeline.Config, error) {
	t.Helper()
	return loadTyped(t, typ, url, query, params, extra, "")
}

// loadTyped loads a config whose source is typ at url with query, declaring the string
// param v and the params of declared (YAML lines).
func loadTyped(t *testing.T, typ, url, query string, params map[string]string, extra, declared string) (*pipeline.Config, error) {
	t.Helper()
	text := fmt.Sprintf(`version: 1
name: bind
pipeline:
  source: {type: %s, config: {connection_url: %q, query: %q%s}}
  sink: {type: stdout}
params:
  v: {type: string}%s
`, typ, url, query, extra, declared)
	l := &execute.Loader{Decoder: configtext.Decoder{}, Env: noEnv{}, Catalog: builtin.Registry()}
	return l.Load(context.Background(), []byte(text), execute.LoadOptions{Params: params, Logical: time.Now()})
}

type noEnv struct{}

func (noEnv) LookupEnv(string) (string, bool)   { return "", false }
func (noEnv) ReadFile(p string) ([]byte, error) { return nil, errors.New("no files here: " + p) }

// readSource reads every row of the config's source with req's extra settings.
func readSource(t *testing.T, cfg *pipeline.Config, req execute.ReadRequest) [][]any {
	t.Helper()
	ctx := context.Background()
	sc, ok := builtin.Registry().Source(cfg.Source.Type)
	require.True(t, ok)
	req.Config = cfg.Source.Config
	src, err := sc.OpenSource(ctx, req)
	require.NoError(t, err)
	defer src.Close()
	var rows [][]any
	for {
		p, err := src.Next(ctx)
		if errors.Is(err, io.EOF) {
			return rows
		}
		require.NoError(t, err)
		for _, r := range p.Rows {
			rows = append(rows, []any{r[0], r[1]})
		}
	}
}

// TestSQLParamsAreBindParameters reads, on SQLite, PostgreSQL and MariaDB, a query whose
// ${param.v} carries quotes, comment markers, semicolons and placeholders: every read
// path (full, incremental, each key-range shard) returns exactly the row whose column
// equals the value, and the table is still there afterwards.
func TestSQLParamsAreBindParameters(t *testing.T) {
	t.Parallel()
	for _, b := range bindDatabases(t) {
		t.Run(b.typ, func(t *testing.T) {
			values := b.fill(t)
			query := "SELECT id, s FROM t WHERE s = ${param.v} ORDER BY id"
			for i, v := range values {
				want := [][]any{{int64(i + 1), v}}
				cfg, err := loadSource(t, b.typ, b.url, query, map[string]string{"v": v}, "")
				require.NoError(t, err, v)
				require.Equal(t, want, readSource(t, cfg, execute.ReadRequest{}), "full read of %q", v)

				inc := execute.ReadRequest{Incremental: &execute.Incremental{Cursor: "id", After: &state.Bookmark{Cursor: "id", Value: int64(0)}}}
				require.Equal(t, want, readSource(t, cfg, inc), "incremental read of %q", v)

				cfg, err = loadSource(t, b.typ, b.url, query, map[string]string{"v": v}, ", shard: {key: id}")
				require.NoError(t, err)
				sc, _ := builtin.Registry().Source(b.typ)
				slices, err := sc.(execute.ShardPlanner).PlanShards(context.Background(), execute.ReadRequest{Config: cfg.Source.Config}, 3)
				require.NoError(t, err, v)
				var got [][]any
				for i := range slices {
					got = append(got, readSource(t, cfg, execute.ReadRequest{Shard: &slices[i]})...)
				}
				require.Equal(t, want, got, "sharded read of %q", v)
			}
			var n int
			require.NoError(t, b.db.QueryRow("SELECT COUNT(*) FROM t").Scan(&n))
			require.Equal(t, len(values), n)
		})
	}
}

// TestSQLParamsInPostgresCopy reads the same way through the COPY fast path, which takes
// no bind parameters itself.
func TestSQLParamsInPostgresCopy(t *testing.T) {
	t.Parallel()
	b := bindDatabases(t)[1]
	values := b.fill(t)
	ctx := context.Background()
	for i, v := range values {
		cfg, err := loadSource(t, b.typ, b.url, "SELECT id, s, d FROM t WHERE s = ${param.v}", map[string]string{"v": v}, "")
		require.NoError(t, err)
		sc, _ := builtin.Registry().Source("postgres")
		src, err := sc.OpenSource(ctx, execute.ReadRequest{Config: cfg.Source.Config})
		require.NoError(t, err)
		ps := src.(execute.PassthroughSource)
		_, ok := ps.Encoding()
		require.True(t, ok)
		require.NoError(t, ps.UseEncoding(ctx))
		var data strings.Builder
		for {
			p, err := ps.Next(ctx)
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err)
			data.Write(p.Encoded.Data)
		}
		require.NoError(t, src.Close())
		escaped := strings.ReplaceAll(v, `\`, `\\`)
		require.Equal(t, fmt.Sprintf("%d\t%s\t2026-01-%02d\n", i+1, escaped, i+1), data.String(), "COPY read of %q", v)
	}
}

// TestSQLParamsRefusedInQuotes: a param written inside quotes would be a literal "$1" or
// "?", never the value; loading refuses it with the position and the unquoted form.
func TestSQLParamsRefusedInQuotes(t *testing.T) {
	t.Parallel()
	for typ, url := range map[string]string{"sqlite": "sqlite:x.db", "postgres": "postgres://h/db", "mysql": "mysql://h/db"} {
		_, err := loadSource(t, typ, url, "SELECT * FROM t WHERE s = '${param.v}'", map[string]string{"v": "a"}, "")
		require.ErrorIs(t, err, pipeline.ErrInvalidConfig, typ)
		require.ErrorContains(t, err, "pipeline.source.config.query: ${param.v} at line 1, column 28 of the query is inside quotes", typ)
		require.ErrorContains(t, err, "write ${param.v} instead of '${param.v}'", typ)
	}
}

// TestSQLParamsKeepTheirTypes binds int and date params with the type they declare: the
// database compares them as numbers and dates, not as text.
func TestSQLParamsKeepTheirTypes(t *testing.T) {
	t.Parallel()
	for _, b := range bindDatabases(t) {
		t.Run(b.typ, func(t *testing.T) {
			b.fill(t)
			cfg, err := loadTyped(t, b.typ, b.url, "SELECT id, s FROM t WHERE id >= ${param.n} AND d <= ${param.until} ORDER BY id",
				map[string]string{"n": "2", "until": "2026-01-03"}, "",
				"\n  n: {type: int, min: 1}\n  until: {type: date, max: \"2030-12-31\"}")
			require.NoError(t, err)
			require.Equal(t, [][]any{{int64(2), "x"}, {int64(3), ""}}, readSource(t, cfg, execute.ReadRequest{}))
		})
	}
}
