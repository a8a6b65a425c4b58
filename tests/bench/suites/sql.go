package suites

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"os/exec"
	"strings"

	"github.com/go-sql-driver/mysql"
	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/tests/bench/harness"
)

// Environment variables naming the databases of the sql suite; the test variables are
// the fallback, so a machine set up for the tests can run the suite as it is.
const (
	EnvBenchPostgres = "SLUICE_BENCH_POSTGRES_URL"
	EnvBenchMySQL    = "SLUICE_BENCH_MYSQL_URL"
	envTestPostgres  = "SLUICE_TEST_POSTGRES_URL"
	envTestMySQL     = "SLUICE_TEST_MYSQL_URL"
)

// benchSchema is the PostgreSQL schema and the MySQL database the suite owns: dropped and
// created again by every run.
const benchSchema = "sluice_bench"

const sqlCSV = "sql-in.csv"

// SQL measures sluice between databases against psql's own COPY: PostgreSQL →
// PostgreSQL (append, upsert), CSV → PostgreSQL, PostgreSQL → JSONL and MariaDB →
// PostgreSQL, all on the same rows (id, name, amount, active, created_at).
func SQL() harness.Suite {
	d := &sqlDBs{}
	return harness.Suite{
		Name:        "sql",
		Description: "sluice run between PostgreSQL, MariaDB and files vs psql \\copy (needs psql, a PostgreSQL and a MariaDB/MySQL URL)",
		Prepare:     d.prepare,
		Cases: []harness.Case{
			d.psqlPipe(),
			d.sluiceCase("pg-pg-append", "PostgreSQL → PostgreSQL append", "dst_append",
				func(d *sqlDBs) harness.Pipeline {
					return harness.Pipeline{Name: "bench-pg-pg-append", Source: d.pgSource(),
						Sink: d.pgSink("dst_append", map[string]any{"create_table": true})}
				}),
			d.sluiceCase("pg-pg-upsert", "PostgreSQL → PostgreSQL upsert", "dst_upsert",
				func(d *sqlDBs) harness.Pipeline {
					return harness.Pipeline{Name: "bench-pg-pg-upsert", Source: d.pgSource(),
						Sink: d.pgSink("dst_upsert", map[string]any{"create_table": true, "write_mode": "upsert", "key": []string{"id"}})}
				}),
			d.psqlCSV(),
			d.sluiceCase("csv-pg", "CSV → PostgreSQL", "dst_csv",
				func(d *sqlDBs) harness.Pipeline {
					return harness.Pipeline{Name: "bench-csv-pg", Source: file(sqlCSV), Sink: d.pgSink("dst_csv", nil)}
				}),
			d.pgJSONL(),
			d.sluiceCase("mariadb-pg", "MariaDB → PostgreSQL", "dst_mariadb",
				func(d *sqlDBs) harness.Pipeline {
					return harness.Pipeline{Name: "bench-mariadb-pg",
						Source: harness.Connector{Type: "mysql", Config: map[string]any{"connection_url": d.mysqlURL,
							"query": "SELECT * FROM src"}},
						Sink: d.pgSink("dst_mariadb", map[string]any{"create_table": true})}
				}),
		},
	}
}

// sqlDBs holds the databases the suite's cases share once Prepare found them.
type sqlDBs struct {
	pgURL    string // as given: libpq (psql) and pgx both accept it
	mysqlURL string // the suite's own database on the MySQL server
	psql     string
}

func (d *sqlDBs) pgSource() harness.Connector {
	return harness.Connector{Type: "postgres", Config: map[string]any{"connection_url": d.pgURL,
		"query": "SELECT * FROM " + benchSchema + ".src"}}
}

func (d *sqlDBs) pgSink(table string, extra map[string]any) harness.Connector {
	c := map[string]any{"connection_url": d.pgURL, "table_name": benchSchema + "." + table}
	for k, v := range extra {
		c[k] = v
	}
	return harness.Connector{Type: "postgres", Config: c}
}

func lookupURL(primary, fallback string) (string, error) {
	for _, name := range []string{primary, fallback} {
		if v := os.Getenv(name); v != "" {
			return v, nil
		}
	}
	return "", fmt.Errorf("set %s (or %s)", primary, fallback)
}

// prepare finds psql and the databases, and writes the rows into PostgreSQL (src), the
// suite's MariaDB database (src) and a CSV file.
func (d *sqlDBs) prepare(ctx context.Context, env *harness.Env) error {
	var err error
	if d.psql, err = exec.LookPath("psql"); err != nil {
		return errors.New("psql is not on PATH; the baselines need it")
	}
	if d.pgURL, err = lookupURL(EnvBenchPostgres, envTestPostgres); err != nil {
		return err
	}
	mysqlBase, err := lookupURL(EnvBenchMySQL, envTestMySQL)
	if err != nil {
		return err
	}
	if err := loadPGSource(ctx, env, d.pgURL, benchSchema); err != nil {
		return err
	}
	env.Progress("writing %s with psql", sqlCSV)
	if _, err := harness.Measure(ctx, harness.Command{Dir: env.Dir, Argv: []string{d.psql, d.pgURL, "-qc",
		`\copy ` + benchSchema + `.src TO '` + sqlCSV + `' WITH (FORMAT csv, HEADER)`}}); err != nil {
		return fmt.Errorf("write the CSV input: %w", err)
	}
	env.Progress("loading %d rows into MariaDB %s.src", env.Rows, benchSchema)
	if d.mysqlURL, err = loadMySQL(ctx, mysqlBase, env.Rows); err != nil {
		return err
	}
	env.Note("Rows: id bigint, name text, amount double precision, active boolean, created_at timestamptz; PostgreSQL %s.src, MariaDB %s.src and %s hold the same rows.",
		benchSchema, benchSchema, sqlCSV)
	env.Note("Baselines: psql \\copy (SELECT * FROM src) TO STDOUT | psql \\copy t FROM STDIN for PostgreSQL → PostgreSQL, psql \\copy t FROM 'file' CSV for CSV → PostgreSQL. Targets are empty tables without indexes, except upsert (primary key id).")
	env.Note("sluice uses its defaults (batch_size 10000, at-least-once); PostgreSQL → PostgreSQL append passes COPY text through unconverted.")
	return nil
}

// loadPGSource drops and creates schema with env.Rows rows in its table src, the rows
// every PostgreSQL-sourced suite reads.
func loadPGSource(ctx context.Context, env *harness.Env, url, schema string) error {
	env.Progress("loading %s rows into PostgreSQL %s.src", harness.Thousands(env.Rows), schema)
	return pgExec(ctx, url,
		"DROP SCHEMA IF EXISTS "+schema+" CASCADE",
		"CREATE SCHEMA "+schema,
		fmt.Sprintf(`CREATE TABLE %s.src AS SELECT g::bigint AS id, 'name-' || g AS name, (g * 1.25)::double precision AS amount,
			g %% 2 = 0 AS active, timestamptz '2025-01-01 00:00:00+00' + g * interval '1 second' AS created_at
			FROM generate_series(1, %d) g`, schema, env.Rows),
		"ALTER TABLE "+schema+".src ADD PRIMARY KEY (id)",
		"ANALYZE "+schema+".src",
	)
}

func (d *sqlDBs) pgExec(ctx context.Context, stmts ...string) error {
	return pgExec(ctx, d.pgURL, stmts...)
}

func (d *sqlDBs) pgCount(table string) func(context.Context, *harness.Env) (int64, error) {
	return func(ctx context.Context, _ *harness.Env) (int64, error) {
		conn, err := pgx.Connect(ctx, d.pgURL)
		if err != nil {
			return 0, err
		}
		defer conn.Close(ctx)
		var n int64
		err = conn.QueryRow(ctx, "SELECT count(*) FROM "+benchSchema+"."+table).Scan(&n)
		return n, err
	}
}

// fresh drops table and, with like, creates it empty with src's columns (no indexes).
func (d *sqlDBs) fresh(ctx context.Context, table string, like bool) error {
	stmts := []string{"DROP TABLE IF EXISTS " + benchSchema + "." + table}
	if like {
		stmts = append(stmts, "CREATE TABLE "+benchSchema+"."+table+" (LIKE "+benchSchema+".src)")
	}
	return d.pgExec(ctx, stmts...)
}

func (d *sqlDBs) dropper(table string) func(*harness.Env) error {
	return func(*harness.Env) error { return d.fresh(context.Background(), table, false) }
}

// sluiceCase times `sluice run` on a pipeline writing into table (dropped first; CSV →
// PostgreSQL gets it created with src's types, the others create it themselves).
func (d *sqlDBs) sluiceCase(id, label, table string, p func(*sqlDBs) harness.Pipeline) harness.Case {
	return harness.Case{
		ID: id, Label: label,
		Run: func(ctx context.Context, env *harness.Env) (harness.Sample, error) {
			if err := d.fresh(ctx, table, id == "csv-pg"); err != nil {
				return harness.Sample{}, err
			}
			name, err := env.WritePipeline(p(d))
			if err != nil {
				return harness.Sample{}, err
			}
			return harness.Measure(ctx, env.SluiceRun(name))
		},
		Count:   d.pgCount(table),
		Cleanup: d.dropper(table),
	}
}

// psqlPipe is the PostgreSQL → PostgreSQL baseline: two psql processes and a pipe.
func (d *sqlDBs) psqlPipe() harness.Case {
	const table = "dst_psql"
	return harness.Case{
		ID: "psql-pipe", Label: "baseline psql \\copy piped to psql \\copy", Baseline: true,
		Run: func(ctx context.Context, env *harness.Env) (harness.Sample, error) {
			if err := d.fresh(ctx, table, true); err != nil {
				return harness.Sample{}, err
			}
			return harness.Measure(ctx, harness.Command{Dir: env.Dir, Argv: []string{"sh", "-c",
				`"$1" "$2" -qc "$3" | "$1" "$2" -qc "$4"`, "sh", d.psql, d.pgURL,
				`\copy (SELECT * FROM ` + benchSchema + `.src) TO STDOUT`,
				`\copy ` + benchSchema + `.` + table + ` FROM STDIN`}})
		},
		Count:   d.pgCount(table),
		Cleanup: d.dropper(table),
	}
}

// psqlCSV is the CSV → PostgreSQL baseline.
func (d *sqlDBs) psqlCSV() harness.Case {
	const table = "dst_psql_csv"
	return harness.Case{
		ID: "psql-csv", Label: "psql \\copy CSV → PostgreSQL",
		Run: func(ctx context.Context, env *harness.Env) (harness.Sample, error) {
			if err := d.fresh(ctx, table, true); err != nil {
				return harness.Sample{}, err
			}
			return harness.Measure(ctx, harness.Command{Dir: env.Dir, Argv: []string{d.psql, d.pgURL, "-qc",
				`\copy ` + benchSchema + `.` + table + ` FROM '` + sqlCSV + `' WITH (FORMAT csv, HEADER)`}})
		},
		Count:   d.pgCount(table),
		Cleanup: d.dropper(table),
	}
}

func (d *sqlDBs) pgJSONL() harness.Case {
	const output = "sql-out.jsonl"
	return harness.Case{
		ID: "pg-jsonl", Label: "PostgreSQL → JSONL",
		Run: func(ctx context.Context, env *harness.Env) (harness.Sample, error) {
			if err := env.RemoveOutputs(output); err != nil {
				return harness.Sample{}, err
			}
			name, err := env.WritePipeline(harness.Pipeline{Name: "bench-pg-jsonl", Source: d.pgSource(), Sink: file(output)})
			if err != nil {
				return harness.Sample{}, err
			}
			return harness.Measure(ctx, env.SluiceRun(name))
		},
		Count:   countLines(output),
		Cleanup: func(env *harness.Env) error { return env.RemoveOutputs(output) },
	}
}

// loadMySQL creates the suite's database on the server of base and fills src with rows
// built from a cross join of digits (works on MySQL and MariaDB alike); it returns the
// database's URL.
func loadMySQL(ctx context.Context, base string, rows int64) (string, error) {
	u, err := url.Parse(base)
	if err != nil || u.Scheme != "mysql" {
		return "", fmt.Errorf("%s is not a mysql:// URL", EnvBenchMySQL)
	}
	cfg := mysql.NewConfig()
	cfg.Net, cfg.Addr = "tcp", u.Host
	if u.Port() == "" {
		cfg.Addr += ":3306"
	}
	if u.User != nil {
		cfg.User = u.User.Username()
		cfg.Passwd, _ = u.User.Password()
	}
	conn, err := mysql.NewConnector(cfg)
	if err != nil {
		return "", fmt.Errorf("mysql: %w", err)
	}
	db := sql.OpenDB(conn)
	defer db.Close()
	db.SetMaxOpenConns(1)
	levels := max(1, int(math.Ceil(math.Log10(float64(max(rows, 2))))))
	var from, sum []string
	for i := range levels {
		from = append(from, fmt.Sprintf("digits d%d", i))
		sum = append(sum, fmt.Sprintf("d%d.n * %d", i, int64(math.Pow10(i))))
	}
	stmts := []string{
		"DROP DATABASE IF EXISTS " + benchSchema,
		"CREATE DATABASE " + benchSchema,
		"USE " + benchSchema,
		"CREATE TABLE digits (n INT PRIMARY KEY)",
		"INSERT INTO digits VALUES (0), (1), (2), (3), (4), (5), (6), (7), (8), (9)",
		`CREATE TABLE src (id BIGINT PRIMARY KEY, name VARCHAR(64), amount DOUBLE, active BOOLEAN, created_at DATETIME(6)) ENGINE=InnoDB`,
		fmt.Sprintf(`INSERT INTO src SELECT id, CONCAT('name-', id), id * 1.25, id %% 2 = 0, TIMESTAMP '2025-01-01 00:00:00' + INTERVAL id SECOND
			FROM (SELECT %s + 1 AS id FROM %s) x WHERE id <= %d`, strings.Join(sum, " + "), strings.Join(from, ", "), rows),
		"DROP TABLE digits",
	}
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return "", fmt.Errorf("mysql: %s: %w", strings.Fields(s)[0], err)
		}
	}
	u.Path = "/" + benchSchema
	return u.String(), nil
}
