package builtin_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/configtext"
	"github.com/sluicehq/sluice/adapters/connectors/builtin"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

func build(t *testing.T, yaml string) (*pipeline.Config, pipeline.Errors) {
	t.Helper()
	n, err := configtext.Decode([]byte(yaml))
	require.NoError(t, err)
	return pipeline.Build(n, builtin.Registry())
}

// run moves every page of the validated config's source into its sink.
func run(t *testing.T, r execute.Registry, cfg *pipeline.Config, dir string) {
	t.Helper()
	ctx := context.Background()
	sc, _ := r.Source(cfg.Source.Type)
	req := execute.ReadRequest{Config: cfg.Source.Config, BaseDir: dir}
	if cfg.Replication.Type == pipeline.Incremental {
		req.Incremental = &execute.Incremental{Cursor: cfg.Replication.Cursor}
	}
	src, err := sc.OpenSource(ctx, req)
	require.NoError(t, err)
	defer src.Close()
	kc, _ := r.Sink(cfg.Sink.Type)
	snk, err := kc.OpenSink(ctx, execute.WriteRequest{Config: cfg.Sink.Config, BaseDir: dir})
	require.NoError(t, err)
	for {
		p, err := src.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		require.NoError(t, err)
		require.NoError(t, snk.Write(ctx, p))
	}
	require.NoError(t, snk.Commit(ctx))
}

// TestValidatedConfigsRun feeds configs through validation (defaults, coercion) and then
// through the connectors, generate → csv → jsonl → sqlite → stdout. CSV makes every
// value text, so the ids stored in SQLite are text too.
func TestValidatedConfigsRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var out bytes.Buffer
	r := builtin.Registry(builtin.WithStdout(&out))
	steps := []string{
		`{type: generate, config: {count: 25, seed: 3, batch_size: 10}}` + "\n  sink: {type: file, config: {path: a.csv}}",
		`{type: file, config: {path: "*.csv"}}` + "\n  sink: {type: file, config: {path: b.jsonl, write_mode: overwrite}}",
		`{type: file, config: {path: b.jsonl}}` + "\n  sink: {type: sqlite, config: {connection_url: \"sqlite:c.db\", table_name: t, create_table: true, write_mode: upsert, key: [id]}}",
		`{type: sqlite, config: {connection_url: c.db, query: "SELECT id, name FROM t WHERE CAST(id AS INTEGER) > 20 ORDER BY CAST(id AS INTEGER)"}}` + "\n  sink: {type: stdout}",
	}
	for _, step := range steps {
		cfg, errs := build(t, "version: 1\nname: x\npipeline:\n  source: "+step+"\n")
		require.Empty(t, errs)
		run(t, r, cfg, dir)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 5)
	require.True(t, strings.HasPrefix(lines[0], `{"id":"21","name":"`), lines[0])
	_, err := os.Stat(filepath.Join(dir, "c.db"))
	require.NoError(t, err)
}

func TestValidationUsesConnectorRules(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`{type: generate, config: {count: 1}}` + "\n  sink: {type: file, config: {path: o.csv, write_mode: upsert}}":                           "pipeline.sink.config.write_mode: write_mode upsert needs rows addressable by key",
		`{type: generate, config: {count: 1}}` + "\n  sink: {type: sqlite, config: {connection_url: a.db, table_name: t, write_mode: delete}}": "pipeline.sink.config.key: required when write_mode is delete",
		`{type: generate, config: {count: 1, columns: [id, colour]}}` + "\n  sink: {type: stdout}":                                             "must be one of id, name, amount, active, created_at",
		`{type: generate, config: {}}` + "\n  sink: {type: stdout}":                                                                            "pipeline.source.config.count",
		`{type: generate, config: {count: 1, rate: -2}}` + "\n  sink: {type: stdout}":                                                          `"rate" must be greater than 0`,
		`{type: file, config: {path: x.json}}` + "\n  sink: {type: stdout}":                                                                    "set format: csv, jsonl or parquet",
		`{type: stdout}` + "\n  sink: {type: stdout}":                                                                                          "cannot be a source",
		`{type: generate, config: {count: 1}}` + "\n  sink: {type: stdout, config: {pretty: true}}":                                            "takes no config keys",
	}
	for step, want := range cases {
		_, errs := build(t, "version: 1\nname: x\npipeline:\n  source: "+step+"\n")
		require.ErrorContains(t, errs.Err(), want, step)
	}
}

func TestSQLConnectorConfigs(t *testing.T) {
	t.Parallel()
	refused := map[string]string{
		"pipeline:\n  source: {type: postgres, config: {connection_url: \"mysql://u@h/d\", query: SELECT 1}}\n  sink: {type: stdout}":                                               "pipeline.source.config.connection_url: must be a postgres:// or postgresql:// URL",
		"pipeline:\n  source: {type: mysql, config: {connection_url: \"postgres://u@h/d\", query: SELECT 1}}\n  sink: {type: stdout}":                                               "pipeline.source.config.connection_url: must be a mysql:// URL",
		"pipeline:\n  source: {type: postgres, config: {connection_url: \"postgres://h/d\"}}\n  sink: {type: stdout}":                                                               "pipeline.source.config.query: required",
		"pipeline:\n  source: {type: generate, config: {count: 1}}\n  sink: {type: postgres, config: {connection_url: \"postgres://h/d\", table_name: t, write_mode: upsert}}":      "pipeline.sink.config.key: required when write_mode is upsert",
		"pipeline:\n  source: {type: generate, config: {count: 1}}\n  sink: {type: postgres, config: {connection_url: \"postgres://h/d\", table_name: t, column_mapping: columns}}": "must be one of auto_map, jsonb",
		"pipeline:\n  source: {type: generate, config: {count: 1}}\n  sink: {type: postgres, config: {connection_url: \"postgres://h/d\", table_name: \"a.b.c\"}}":                  "pipeline.sink.config.table_name: must be table or schema.table",
		"pipeline:\n  source: {type: generate, config: {count: 1}}\n  sink: {type: mysql, config: {connection_url: \"mysql://h/d\", table_name: t, column_mapping: jsonb}}":         "unknown key for a mysql sink",
		"delivery: exactly_once\npipeline:\n  source: {type: generate, config: {count: 1}}\n  sink: {type: file, config: {path: o.csv}}":                                            `exactly_once needs a SQL sink that supports it (a transactional watermark); sink type "file" does not — use delivery: at_least_once or such a sink`,
	}
	for doc, want := range refused {
		_, errs := build(t, "version: 1\nname: x\n"+doc+"\n")
		require.ErrorContains(t, errs.Err(), want, doc)
	}
	for _, sink := range []string{
		`{type: postgres, config: {connection_url: "postgresql://u:p@h:5432/d?sslmode=disable", table_name: "s.t", write_mode: upsert, key: [id], column_mapping: jsonb, jsonb_column: doc}}`,
		`{type: mysql, config: {connection_url: "mysql://u:p@h:3306/d", table_name: t, write_mode: delete, key: [id]}}`,
		`{type: sqlite, config: {connection_url: "sqlite:x.db", table_name: t}}`,
	} {
		cfg, errs := build(t, "version: 1\nname: x\ndelivery: exactly_once\npipeline:\n  source: {type: generate, config: {count: 1}}\n  sink: "+sink+"\n")
		require.Empty(t, errs, sink)
		require.Equal(t, pipeline.ExactlyOnce, cfg.Delivery)
	}
}
