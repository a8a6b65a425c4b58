package suites

import (
	"context"
	"fmt"
	"os"

	"github.com/sluicehq/sluice/tests/bench/harness"
)

// Files of the foundation suite inside the run's temp directory.
const (
	inputCSV       = "in.csv"
	baselinePkg    = "./tests/bench/baseline/csv2jsonl"
	baselineBinary = "csv2jsonl"
)

// Foundation measures what `sluice run` does with local files and SQLite against a
// plain standard-library CSV → JSONL program.
func Foundation() harness.Suite {
	return harness.Suite{
		Name:        "foundation",
		Description: "sluice run on local files and SQLite vs an encoding/csv + encoding/json program",
		Prepare:     prepareFoundation,
		Cases: []harness.Case{
			sluiceCase("gen-jsonl", "generate → JSONL", "out-gen.jsonl", countLines("out-gen.jsonl")),
			sluiceCase("csv-jsonl", "CSV → JSONL", "out.jsonl", countLines("out.jsonl")),
			sluiceCase("csv-sqlite", "CSV → SQLite", "out.db", func(ctx context.Context, env *harness.Env) (int64, error) {
				return harness.CountSQLiteRows(ctx, env.Path("out.db"), "rows")
			}),
			baselineCase(),
		},
	}
}

// prepareFoundation builds the baseline and writes the input CSV with sluice itself
// (generate → CSV), checking it has a header plus env.Rows lines.
func prepareFoundation(ctx context.Context, env *harness.Env) error {
	if _, err := env.Build(ctx, baselinePkg, baselineBinary); err != nil {
		return err
	}
	name, err := env.WritePipeline(FoundationPipelines(env.Rows)[prepareID])
	if err != nil {
		return err
	}
	if err := env.RemoveOutputs(inputCSV); err != nil {
		return err
	}
	env.Progress("writing %s (%d rows) with generate → CSV", inputCSV, env.Rows)
	s, err := harness.Measure(ctx, env.SluiceRun(name))
	if err != nil {
		return fmt.Errorf("generate the input: %w", err)
	}
	n, err := harness.CountLines(env.Path(inputCSV))
	if err != nil {
		return err
	}
	if n != env.Rows+1 {
		return fmt.Errorf("generate the input: %s has %d lines, want a header and %d rows", inputCSV, n, env.Rows)
	}
	info, err := os.Stat(env.Path(inputCSV))
	if err != nil {
		return fmt.Errorf("generate the input: %w", err)
	}
	env.Note("Input: %s, %.1f MiB (id, name, amount, active, created_at), written by sluice generate → CSV in %.2f s.",
		inputCSV, float64(info.Size())/(1<<20), s.Wall.Seconds())
	env.Note("Each row is one process (sluice run --quiet FILE; the baseline is tests/bench/baseline/csv2jsonl); rows/s = rows / wall time; peak RSS = ru_maxrss; every output's row count is verified.")
	return nil
}

// prepareID keys the pipeline that writes the input CSV in FoundationPipelines.
const prepareID = "gen-csv"

// FoundationPipelines are the sluice configs of the foundation suite for rows rows, by
// case ID (plus gen-csv, which writes the input). Relative paths resolve against the
// temp directory the configs are written to.
func FoundationPipelines(rows int64) map[string]harness.Pipeline {
	gen := harness.Connector{Type: "generate", Config: map[string]any{"count": rows, "seed": 1}}
	return map[string]harness.Pipeline{
		prepareID:   {Name: "bench-gen-csv", Source: gen, Sink: file(inputCSV)},
		"gen-jsonl": {Name: "bench-gen-jsonl", Source: gen, Sink: file("out-gen.jsonl")},
		"csv-jsonl": {Name: "bench-csv-jsonl", Source: file(inputCSV), Sink: file("out.jsonl")},
		"csv-sqlite": {Name: "bench-csv-sqlite", Source: file(inputCSV), Sink: harness.Connector{
			Type: "sqlite",
			Config: map[string]any{
				"connection_url": "sqlite:out.db", "table_name": "rows",
				"write_mode": "append", "create_table": true,
			},
		}},
	}
}

func file(path string) harness.Connector {
	return harness.Connector{Type: "file", Config: map[string]any{"path": path}}
}

// sluiceCase times `sluice run` on the case's pipeline, starting without output.
func sluiceCase(id, label, output string, count func(context.Context, *harness.Env) (int64, error)) harness.Case {
	return harness.Case{
		ID:    id,
		Label: label,
		Run: func(ctx context.Context, env *harness.Env) (harness.Sample, error) {
			if err := env.RemoveOutputs(output); err != nil {
				return harness.Sample{}, err
			}
			name, err := env.WritePipeline(FoundationPipelines(env.Rows)[id])
			if err != nil {
				return harness.Sample{}, err
			}
			return harness.Measure(ctx, env.SluiceRun(name))
		},
		Count:   count,
		Cleanup: func(env *harness.Env) error { return env.RemoveOutputs(output) },
	}
}

func baselineCase() harness.Case {
	const output = "out-baseline.jsonl"
	return harness.Case{
		ID:       "baseline",
		Label:    "baseline CSV → JSONL (Go stdlib)",
		Baseline: true,
		Run: func(ctx context.Context, env *harness.Env) (harness.Sample, error) {
			bin, err := env.Build(ctx, baselinePkg, baselineBinary)
			if err != nil {
				return harness.Sample{}, err
			}
			if err := env.RemoveOutputs(output); err != nil {
				return harness.Sample{}, err
			}
			return harness.Measure(ctx, harness.Command{Argv: []string{bin, inputCSV, output}, Dir: env.Dir})
		},
		Count:   countLines(output),
		Cleanup: func(env *harness.Env) error { return env.RemoveOutputs(output) },
	}
}

// countLines counts the lines of a JSONL file in the temp directory: one row each.
func countLines(name string) func(context.Context, *harness.Env) (int64, error) {
	return func(_ context.Context, env *harness.Env) (int64, error) {
		return harness.CountLines(env.Path(name))
	}
}
