package suites

import (
	"bytes"
	"context"
	"fmt"
	"os"

	"github.com/jackc/pgx/v5"
	"github.com/parquet-go/parquet-go"

	"github.com/sluicehq/sluice/tests/bench/harness"
	"github.com/sluicehq/sluice/tests/s3fake"
)

// Files, keys and tables of the objects suite.
const (
	objectsSchema   = "sluice_bench_objects"
	objectsBucket   = "bench"
	objectsCSV      = "objects-in.csv"
	objectsParquet  = "objects-in.parquet"
	objectsInKey    = "in/data.parquet"
	objectsBaseline = "./tests/bench/baseline/objects"
)

// Objects measures Parquet and S3 pipelines against a program doing the same with the raw
// libraries: CSV → Parquet file, Parquet file → JSONL, PostgreSQL → S3 Parquet and S3
// Parquet → PostgreSQL, the store being gofakes3 inside this process.
func Objects() harness.Suite {
	o := &objectsEnv{}
	return harness.Suite{
		Name:        "objects",
		Description: "Parquet files and S3 (gofakes3 in process) vs parquet-go / AWS SDK / pgx programs (needs a PostgreSQL URL)",
		Prepare:     o.prepare,
		Cases: []harness.Case{
			o.fileCase("csv-parquet", "CSV → Parquet file", "objects-out.parquet", objectsCSV, countParquetFile("objects-out.parquet")),
			o.baseCase("base-csv-parquet", "baseline CSV → Parquet (encoding/csv + parquet-go)", true, "objects-base.parquet",
				func(out string) []string { return []string{"csv2parquet", objectsCSV, out} }, countParquetFile("objects-base.parquet")),
			o.fileCase("parquet-jsonl", "Parquet file → JSONL", "objects-out.jsonl", objectsParquet, countLines("objects-out.jsonl")),
			o.baseCase("base-parquet-jsonl", "baseline Parquet → JSONL (parquet-go + encoding/json)", false, "objects-base.jsonl",
				func(out string) []string { return []string{"parquet2jsonl", objectsParquet, out} }, countLines("objects-base.jsonl")),
			o.pgS3Case(),
			o.basePGS3Case(),
			o.s3PGCase(),
			o.baseS3PGCase(),
		},
	}
}

type objectsEnv struct {
	pgURL string
	srv   *s3fake.Server
	base  string // the baseline binary
}

func (o *objectsEnv) prepare(ctx context.Context, env *harness.Env) error {
	var err error
	if o.pgURL, err = lookupURL(EnvBenchPostgres, envTestPostgres); err != nil {
		return err
	}
	if o.base, err = env.Build(ctx, objectsBaseline, "objects-baseline"); err != nil {
		return err
	}
	if o.srv, err = s3fake.Start(); err != nil {
		return err
	}
	if err := o.srv.CreateBucket(objectsBucket); err != nil {
		return err
	}
	if err := loadPGSource(ctx, env, o.pgURL, objectsSchema); err != nil {
		return err
	}
	gen := harness.Connector{Type: "generate", Config: map[string]any{"count": env.Rows, "seed": 1}}
	for _, out := range []string{objectsCSV, objectsParquet} {
		env.Progress("writing %s (%s rows) with generate", out, harness.Thousands(env.Rows))
		if err := env.RemoveOutputs(out); err != nil {
			return err
		}
		name, err := env.WritePipeline(harness.Pipeline{Name: "bench-objects-gen", Source: gen, Sink: file(out)})
		if err != nil {
			return err
		}
		if _, err := harness.Measure(ctx, env.SluiceRun(name)); err != nil {
			return fmt.Errorf("generate %s: %w", out, err)
		}
	}
	data, err := os.ReadFile(env.Path(objectsParquet))
	if err != nil {
		return err
	}
	if err := o.srv.Put(ctx, objectsBucket, objectsInKey, data); err != nil {
		return err
	}
	env.Note("Input: generate's rows (id, name, amount, active, created_at) as %s and %s (%.1f MiB, zstd, 100,000-row groups, also s3://%s/%s); PostgreSQL %s.src holds the sql suite's rows.",
		objectsCSV, objectsParquet, float64(len(data))/(1<<20), objectsBucket, objectsInKey, objectsSchema)
	env.Note("S3 is gofakes3 in the benchmark process, reached over loopback HTTP by both sluice and the baseline; its memory is not in either's RSS.")
	env.Note("Baseline: tests/bench/baseline/objects (encoding/csv, encoding/json, parquet-go, pgx, the AWS SDK's upload and download managers; no sluice code).")
	return nil
}

// s3Config is an s3 connector config for path on the suite's store.
func (o *objectsEnv) s3Config(path string) map[string]any {
	c := o.srv.Config(path)
	c["format"] = "parquet"
	return c
}

func (o *objectsEnv) fileCase(id, label, output, input string, count func(context.Context, *harness.Env) (int64, error)) harness.Case {
	return harness.Case{
		ID: id, Label: label,
		Run: func(ctx context.Context, env *harness.Env) (harness.Sample, error) {
			if err := env.RemoveOutputs(output); err != nil {
				return harness.Sample{}, err
			}
			name, err := env.WritePipeline(harness.Pipeline{Name: "bench-" + id, Source: file(input), Sink: file(output)})
			if err != nil {
				return harness.Sample{}, err
			}
			return harness.Measure(ctx, env.SluiceRun(name))
		},
		Count:   count,
		Cleanup: func(env *harness.Env) error { return env.RemoveOutputs(output) },
	}
}

func (o *objectsEnv) baseCase(id, label string, baseline bool, output string, args func(out string) []string,
	count func(context.Context, *harness.Env) (int64, error)) harness.Case {
	return harness.Case{
		ID: id, Label: label, Baseline: baseline,
		Run: func(ctx context.Context, env *harness.Env) (harness.Sample, error) {
			if err := env.RemoveOutputs(output); err != nil {
				return harness.Sample{}, err
			}
			return harness.Measure(ctx, harness.Command{Argv: append([]string{o.base}, args(output)...), Dir: env.Dir})
		},
		Count:   count,
		Cleanup: func(env *harness.Env) error { return env.RemoveOutputs(output) },
	}
}

func (o *objectsEnv) pgS3Case() harness.Case {
	const prefix = "out-sluice/"
	return harness.Case{
		ID: "pg-s3", Label: "PostgreSQL → S3 Parquet",
		Run: func(ctx context.Context, env *harness.Env) (harness.Sample, error) {
			if err := o.srv.DeletePrefix(ctx, objectsBucket, prefix); err != nil {
				return harness.Sample{}, err
			}
			name, err := env.WritePipeline(harness.Pipeline{Name: "bench-pg-s3",
				Source: harness.Connector{Type: "postgres", Config: map[string]any{"connection_url": o.pgURL,
					"query": "SELECT * FROM " + objectsSchema + ".src"}},
				Sink: harness.Connector{Type: "s3", Config: o.s3Config("s3://" + objectsBucket + "/" + prefix)}})
			if err != nil {
				return harness.Sample{}, err
			}
			return harness.Measure(ctx, env.SluiceRun(name))
		},
		Count:   o.countObjects(prefix),
		Cleanup: func(*harness.Env) error { return o.srv.DeletePrefix(context.Background(), objectsBucket, prefix) },
	}
}

func (o *objectsEnv) basePGS3Case() harness.Case {
	const prefix = "out-base/"
	return harness.Case{
		ID: "base-pg-s3", Label: "baseline PostgreSQL → S3 Parquet (pgx + parquet-go + upload manager)",
		Run: func(ctx context.Context, env *harness.Env) (harness.Sample, error) {
			if err := o.srv.DeletePrefix(ctx, objectsBucket, prefix); err != nil {
				return harness.Sample{}, err
			}
			return harness.Measure(ctx, harness.Command{Dir: env.Dir, Argv: []string{o.base, "pg2s3", o.pgURL,
				"SELECT * FROM " + objectsSchema + ".src", o.srv.URL, s3fake.KeyID, s3fake.Secret, objectsBucket, prefix + "data.parquet"}})
		},
		Count:   o.countObjects(prefix),
		Cleanup: func(*harness.Env) error { return o.srv.DeletePrefix(context.Background(), objectsBucket, prefix) },
	}
}

func (o *objectsEnv) s3PGCase() harness.Case {
	const table = "dst_s3"
	return harness.Case{
		ID: "s3-pg", Label: "S3 Parquet → PostgreSQL",
		Run: func(ctx context.Context, env *harness.Env) (harness.Sample, error) {
			if err := o.freshTable(ctx, table); err != nil {
				return harness.Sample{}, err
			}
			src := o.s3Config("s3://" + objectsBucket + "/in/*.parquet")
			name, err := env.WritePipeline(harness.Pipeline{Name: "bench-s3-pg",
				Source: harness.Connector{Type: "s3", Config: src},
				Sink: harness.Connector{Type: "postgres", Config: map[string]any{"connection_url": o.pgURL,
					"table_name": objectsSchema + "." + table}}})
			if err != nil {
				return harness.Sample{}, err
			}
			return harness.Measure(ctx, env.SluiceRun(name))
		},
		Count: o.countTable(table),
		Cleanup: func(*harness.Env) error {
			return pgExec(context.Background(), o.pgURL, "DROP TABLE "+objectsSchema+"."+table)
		},
	}
}

func (o *objectsEnv) baseS3PGCase() harness.Case {
	const table = "dst_s3_base"
	return harness.Case{
		ID: "base-s3-pg", Label: "baseline S3 Parquet → PostgreSQL (download manager + parquet-go + pgx COPY)",
		Run: func(ctx context.Context, env *harness.Env) (harness.Sample, error) {
			if err := o.freshTable(ctx, table); err != nil {
				return harness.Sample{}, err
			}
			return harness.Measure(ctx, harness.Command{Dir: env.Dir, Argv: []string{o.base, "s32pg", o.srv.URL,
				s3fake.KeyID, s3fake.Secret, objectsBucket, objectsInKey, o.pgURL, objectsSchema + "." + table}})
		},
		Count: o.countTable(table),
		Cleanup: func(*harness.Env) error {
			return pgExec(context.Background(), o.pgURL, "DROP TABLE "+objectsSchema+"."+table)
		},
	}
}

// freshTable creates table empty with generate's columns.
func (o *objectsEnv) freshTable(ctx context.Context, table string) error {
	t := objectsSchema + "." + table
	return pgExec(ctx, o.pgURL, "DROP TABLE IF EXISTS "+t,
		"CREATE TABLE "+t+" (id bigint, name text, amount double precision, active boolean, created_at timestamptz)")
}

func (o *objectsEnv) countTable(table string) func(context.Context, *harness.Env) (int64, error) {
	return func(ctx context.Context, _ *harness.Env) (int64, error) {
		conn, err := pgx.Connect(ctx, o.pgURL)
		if err != nil {
			return 0, err
		}
		defer conn.Close(ctx)
		var n int64
		err = conn.QueryRow(ctx, "SELECT count(*) FROM "+objectsSchema+"."+table).Scan(&n)
		return n, err
	}
}

// countObjects adds up the rows of the Parquet objects under prefix (from their footers).
func (o *objectsEnv) countObjects(prefix string) func(context.Context, *harness.Env) (int64, error) {
	return func(ctx context.Context, _ *harness.Env) (int64, error) {
		keys, err := o.srv.Keys(ctx, objectsBucket, prefix)
		if err != nil {
			return 0, err
		}
		var n int64
		for _, k := range keys {
			data, err := o.srv.Get(ctx, objectsBucket, k)
			if err != nil {
				return 0, err
			}
			f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				return 0, fmt.Errorf("%s: %w", k, err)
			}
			n += f.NumRows()
		}
		return n, nil
	}
}

func countParquetFile(name string) func(context.Context, *harness.Env) (int64, error) {
	return func(_ context.Context, env *harness.Env) (int64, error) {
		f, err := os.Open(env.Path(name))
		if err != nil {
			return 0, err
		}
		defer f.Close()
		st, err := f.Stat()
		if err != nil {
			return 0, err
		}
		pf, err := parquet.OpenFile(f, st.Size())
		if err != nil {
			return 0, err
		}
		return pf.NumRows(), nil
	}
}
