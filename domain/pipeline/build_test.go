package pipeline_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
)

type drop struct{}

// doc is a valid config with top-level keys replaced, added or (with drop{}) removed.
func doc(overrides ...any) *pipeline.Node {
	root := m(
		"version", 1,
		"name", "orders-mirror",
		"pipeline", m(
			"source", m("type", "db", "config", m("connection_url", "postgres://u:p@h/db", "query", "SELECT 1")),
			"sink", m("type", "db", "config", m("connection_url", "postgres://h/wh", "table_name", "orders")),
		),
	)
	for i := 0; i < len(overrides); i += 2 {
		key := overrides[i].(string)
		idx := -1
		for j, f := range root.Fields {
			if f.Key == key {
				idx = j
			}
		}
		if _, isDrop := overrides[i+1].(drop); isDrop {
			root.Fields = append(root.Fields[:idx], root.Fields[idx+1:]...)
			continue
		}
		f := pipeline.Field{Key: key, Value: val(overrides[i+1])}
		if idx >= 0 {
			root.Fields[idx] = f
		} else {
			root.Fields = append(root.Fields, f)
		}
	}
	return root
}

// pipe builds the pipeline block from a source and a sink block.
func pipe(source, sink *pipeline.Node, extra ...any) *pipeline.Node {
	return m(append([]any{"source", source, "sink", sink}, extra...)...)
}

func dbSource(kv ...any) *pipeline.Node {
	return m("type", "db", "config", m(append([]any{"connection_url", "postgres://h/db", "query", "SELECT 1"}, kv...)...))
}

func dbSink(kv ...any) *pipeline.Node {
	return m("type", "db", "config", m(append([]any{"connection_url", "postgres://h/wh", "table_name", "t"}, kv...)...))
}

func TestBuildValidConfig(t *testing.T) {
	t.Parallel()
	root := doc(
		"pool", "default",
		"shard", m("count", 8),
		"delivery", "exactly_once",
		"replication", m("type", "incremental", "cursor", "updated_at"),
		"pipeline", pipe(dbSource("batch_size", 500), dbSink("write_mode", "upsert", "key", l("id"), "create_table", true),
			"state", m("type", "postgres", "key", "orders/x", "config", m("connection_url", "postgresql://s/state"))),
		"params", m("region", m("type", "string", "default", "eu")),
	)
	cfg, errs := pipeline.Build(root, testCatalog())
	require.Empty(t, errs)
	require.Equal(t, &pipeline.Config{
		Version: 1, Name: "orders-mirror", Pool: "default", ShardCount: 8, Delivery: pipeline.ExactlyOnce,
		Replication: pipeline.Replication{Type: pipeline.Incremental, Cursor: "updated_at"},
		Source: pipeline.Connector{Type: "db", Config: map[string]any{
			"connection_url": "postgres://h/db", "query": "SELECT 1", "batch_size": int64(500),
		}},
		Sink: pipeline.Connector{Type: "db", Config: map[string]any{
			"connection_url": "postgres://h/wh", "table_name": "t", "write_mode": "upsert", "key": []string{"id"}, "create_table": true,
		}},
		State:  pipeline.State{Type: pipeline.StatePostgres, Key: "orders/x", Config: map[string]any{"connection_url": "postgresql://s/state"}},
		Params: []pipeline.Param{{Name: "region", Type: pipeline.ParamString, Default: "eu"}},
	}, cfg)
}

func TestBuildDefaultsAndCoercion(t *testing.T) {
	t.Parallel()
	root := doc(
		"version", "1",
		"shard", m("count", "1"),
		"pipeline", pipe(
			m("type", "gen", "config", m("count", "5", "rate", 3, "verbose", "TRUE", "columns", l("a", 1), "extra", m("k", "v"))),
			m("type", "out"),
		),
	)
	cfg, errs := pipeline.Build(root, testCatalog())
	require.Empty(t, errs)
	require.Equal(t, 1, cfg.ShardCount)
	require.Equal(t, pipeline.AtLeastOnce, cfg.Delivery)
	require.Equal(t, pipeline.Replication{Type: pipeline.Full}, cfg.Replication)
	require.Equal(t, pipeline.StateDefault, cfg.State.Type)
	require.Equal(t, map[string]any{
		"count": int64(5), "rate": float64(3), "verbose": true, "columns": []any{"a", int64(1)}, "extra": map[string]any{"k": "v"},
	}, cfg.Source.Config)
	require.Equal(t, map[string]any{"format": "jsonl"}, cfg.Sink.Config)

	cfg, errs = pipeline.Build(doc(), testCatalog())
	require.Empty(t, errs)
	require.Equal(t, int64(pipeline.BatchSizeDefault), cfg.Source.Int("batch_size", 0))
	require.Equal(t, map[string]any{
		"connection_url": "postgres://h/wh", "table_name": "orders", "write_mode": "append", "create_table": false,
	}, cfg.Sink.Config)
}

func TestBuildRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		root *pipeline.Node
		want string
	}{
		{"unknown top key", doc("colour", "red"), "colour: unknown key (known keys: version, name, pool, shard, delivery, replication, retry, pipeline, params)"},
		{"version missing", doc("version", drop{}), "version: required: write version: 1"},
		{"version 2", doc("version", 2), "version: must be 1"},
		{"version text", doc("version", "one"), "version: must be an integer"},
		{"name missing", doc("name", drop{}), "name: required"},
		{"name invalid", doc("name", "Orders Mirror"), `name: name "Orders Mirror" is not a valid name`},
		{"name not string", doc("name", 12), "name: must be a string, not an integer (quote the value)"},
		{"pool invalid", doc("pool", "GPU"), `pool: pool "GPU" is not a valid name`},
		{"shard zero", doc("shard", m("count", 0)), "shard.count: must be between 1 and 4096 (1 = unsharded)"},
		{"shard too many", doc("shard", m("count", 4097)), "shard.count: must be between 1 and 4096"},
		{"shard negative text", doc("shard", m("count", "-1")), "shard.count: must be between 1 and 4096"},
		{"shard count missing", doc("shard", m()), "shard.count: required"},
		{"shard not a map", doc("shard", 3), "shard: must be a map, not an integer"},
		{"shard unknown key", doc("shard", m("count", 2, "key", "id")), "shard.key: unknown key (known keys: count)"},
		{"delivery bad", doc("delivery", "twice"), `delivery: must be one of at_least_once, exactly_once, not "twice"`},
		{"exactly once non-sql sink", doc("delivery", "exactly_once", "pipeline", pipe(dbSource(), m("type", "out"))),
			`delivery: exactly_once needs a SQL sink that supports it (a transactional watermark); sink type "out" does not`},
		{"incremental without cursor", doc("replication", m("type", "incremental")), "replication.cursor: required when type is incremental"},
		{"incremental empty cursor", doc("replication", m("type", "incremental", "cursor", " ")), "replication.cursor: required when type is incremental"},
		{"cursor with full", doc("replication", m("cursor", "id")), "replication.cursor: only used with type: incremental"},
		{"replication type bad", doc("replication", m("type", "cdc")), `replication.type: must be one of full, incremental, not "cdc"`},
		{"replication unknown", doc("replication", m("type", "full", "mode", "x")), "replication.mode: unknown key (known keys: type, cursor)"},
		{"pipeline missing", doc("pipeline", drop{}), "pipeline: required"},
		{"pipeline unknown", doc("pipeline", pipe(dbSource(), dbSink(), "transform", "x")), "pipeline.transform: unknown key (known keys: source, sink, state)"},
		{"source missing", doc("pipeline", m("sink", dbSink())), "pipeline.source: required"},
		{"source type missing", doc("pipeline", pipe(m("config", m()), dbSink())), "pipeline.source.type: required (known source types: db, gen)"},
		{"source type unknown", doc("pipeline", pipe(m("type", "kafka"), dbSink())), `pipeline.source.type: unknown source type "kafka" (known source types: db, gen)`},
		{"sink wrong role", doc("pipeline", pipe(dbSource(), m("type", "gen", "config", m("count", 1)))), `pipeline.sink.type: connector "gen" cannot be a sink (known sink types: db, out)`},
		{"source wrong role", doc("pipeline", pipe(m("type", "out"), dbSink())), `pipeline.source.type: connector "out" cannot be a source (known source types: db, gen)`},
		{"connector unknown key", doc("pipeline", pipe(m("type", "db", "cfg", m(), "config", m("connection_url", "x", "query", "q")), dbSink())), "pipeline.source.cfg: unknown key (known keys: type, config)"},
		{"config unknown key", doc("pipeline", pipe(dbSource("table_name", "x"), dbSink())),
			"pipeline.source.config.table_name: unknown key for a db source (known keys: connection_url, query, batch_size)"},
		{"config required", doc("pipeline", pipe(m("type", "db", "config", m("query", "q")), dbSink())), "pipeline.source.config.connection_url: required"},
		{"config absent required", doc("pipeline", pipe(m("type", "gen"), dbSink())), "pipeline.source.config.count: required"},
		{"config not a map", doc("pipeline", pipe(dbSource(), m("type", "db", "config", l()))), "pipeline.sink.config: must be a map, not a list"},
		{"min", doc("pipeline", pipe(dbSource("batch_size", 0), dbSink())), "pipeline.source.config.batch_size: must be at least 1"},
		{"int type", doc("pipeline", pipe(dbSource("batch_size", "lots"), dbSink())), "pipeline.source.config.batch_size: must be an integer"},
		{"float for int", doc("pipeline", pipe(dbSource("batch_size", 2.5), dbSink())), "pipeline.source.config.batch_size: must be an integer"},
		{"number type", doc("pipeline", pipe(m("type", "gen", "config", m("count", 1, "rate", true)), dbSink())), "pipeline.source.config.rate: must be a number"},
		{"bool type", doc("pipeline", pipe(m("type", "gen", "config", m("count", 1, "verbose", "yes")), dbSink())), "pipeline.source.config.verbose: must be true or false"},
		{"object type", doc("pipeline", pipe(m("type", "gen", "config", m("count", 1, "extra", "x")), dbSink())), "pipeline.source.config.extra: must be a map, not a string"},
		{"list type", doc("pipeline", pipe(m("type", "gen", "config", m("count", 1, "columns", m())), dbSink())), "pipeline.source.config.columns: must be a list, not a map"},
		{"string type", doc("pipeline", pipe(dbSource(), dbSink("table_name", 2024))), "pipeline.sink.config.table_name: must be a string, not an integer (quote the value)"},
		{"upsert without key", doc("pipeline", pipe(dbSource(), dbSink("write_mode", "upsert"))), "pipeline.sink.config.key: required when write_mode is upsert"},
		{"delete with empty key", doc("pipeline", pipe(dbSource(), dbSink("write_mode", "delete", "key", l()))), "pipeline.sink.config.key: required when write_mode is delete"},
		{"enum", doc("pipeline", pipe(dbSource(), dbSink("write_mode", "merge"))), `pipeline.sink.config.write_mode: must be one of append, upsert, delete, overwrite, not "merge"`},
		{"connector without keys", doc("pipeline", pipe(dbSource(), m("type", "out", "config", m("format", "csv", "x", 1)))), "pipeline.sink.config.x: unknown key for a out sink (known keys: format)"},
		{"enum default", doc("pipeline", pipe(dbSource(), m("type", "out", "config", m("format", "xml")))), `pipeline.sink.config.format: must be one of jsonl, csv, not "xml"`},
		{"strings not list", doc("pipeline", pipe(dbSource(), dbSink("write_mode", "upsert", "key", "id"))), "pipeline.sink.config.key: must be a list of strings, not a string"},
		{"strings item", doc("pipeline", pipe(dbSource(), dbSink("key", l("id", 3)))), "pipeline.sink.config.key[1]: must be a string, not an integer"},
		{"state type", doc("pipeline", pipe(dbSource(), dbSink(), "state", m("type", "redis"))), `pipeline.state.type: must be one of history, local, postgres, not "redis"`},
		{"state postgres no config", doc("pipeline", pipe(dbSource(), dbSink(), "state", m("type", "postgres"))), "pipeline.state.config.connection_url: required when type is postgres"},
		{"state postgres bad url", doc("pipeline", pipe(dbSource(), dbSink(), "state", m("type", "postgres", "config", m("connection_url", "mysql://u:secret@h/x")))),
			"pipeline.state.config.connection_url: must be a postgres:// or postgresql:// URL"},
		{"state config for history", doc("pipeline", pipe(dbSource(), dbSink(), "state", m("type", "history", "config", m("connection_url", "x")))), "pipeline.state.config: only used with type: postgres"},
		{"state config unknown", doc("pipeline", pipe(dbSource(), dbSink(), "state", m("type", "postgres", "config", m("connection_url", "postgres://h", "table", "x")))),
			"pipeline.state.config.table: unknown key (known keys: connection_url)"},
		{"state empty key", doc("pipeline", pipe(dbSource(), dbSink(), "state", m("key", ""))), "pipeline.state.key: must not be empty"},
		{"state unknown", doc("pipeline", pipe(dbSource(), dbSink(), "state", m("kind", "local"))), "pipeline.state.kind: unknown key (known keys: type, key, config)"},
		{"params", doc("params", m("n", m("type", "decimal"))), `params.n.type: must be one of string, int, float, bool, date, datetime, not "decimal"`},
		{"retry on", doc("retry", m("on", "sometimes")), `retry.on: must be one of transient, any, not "sometimes"`},
		{"retry attempts", doc("retry", m("max_attempts", 0)), "retry.max_attempts: must be between 1 and 100"},
		{"retry initial", doc("retry", m("initial_secs", -1)), "retry.initial_secs: must be a number of seconds above 0"},
		{"retry max below initial", doc("retry", m("initial_secs", 30, "max_secs", 5)), "retry.max_secs: (5s) must be ≥ initial_secs"},
		{"retry unknown", doc("retry", m("attempts", 3)), "retry.attempts: unknown key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg, errs := pipeline.Build(tc.root, testCatalog())
			require.Nil(t, cfg)
			require.Len(t, errs, 1, "%v", errs)
			require.True(t, strings.HasPrefix(errs[0].String(), tc.want), "got %q\nwant prefix %q", errs[0].String(), tc.want)
			require.True(t, errors.Is(errs.Err(), pipeline.ErrInvalidConfig))
			require.NotContains(t, errs.Error(), "secret", "values must not be echoed")
		})
	}
}

func TestBuildRetry(t *testing.T) {
	t.Parallel()
	cfg, errs := pipeline.Build(doc(), testCatalog())
	require.Empty(t, errs)
	require.Nil(t, cfg.Retry, "no retry block: a failure is final")

	cfg, errs = pipeline.Build(doc("retry", m("max_attempts", 5, "initial_secs", 0.5, "on", "any")), testCatalog())
	require.Empty(t, errs)
	want := pipeline.DefaultRetry()
	want.MaxAttempts, want.Backoff.Initial, want.On = 5, 500*time.Millisecond, run.RetryAny
	require.Equal(t, &want, cfg.Retry)
}

func TestBuildReportsEveryError(t *testing.T) {
	t.Parallel()
	root := doc(
		"version", 3,
		"name", drop{},
		"shard", m("count", 0),
		"extra", 1,
		"pipeline", pipe(dbSource("batch_size", 0, "nope", 1), dbSink("write_mode", "upsert")),
	)
	_, errs := pipeline.Build(root, testCatalog())
	paths := map[string]bool{}
	for _, e := range errs {
		paths[e.Path] = true
	}
	require.Equal(t, map[string]bool{
		"version": true, "name": true, "shard.count": true, "extra": true,
		"pipeline.source.config.batch_size": true, "pipeline.source.config.nope": true, "pipeline.sink.config.key": true,
	}, paths)
}

func TestBuildNonMapRoot(t *testing.T) {
	t.Parallel()
	_, errs := pipeline.Build(l(1), testCatalog())
	require.Len(t, errs, 1)
	require.Contains(t, errs[0].Message, "must be a map")
	_, errs = pipeline.Build(nil, testCatalog())
	require.Len(t, errs, 1)
}

func TestBuildPositions(t *testing.T) {
	t.Parallel()
	sinkConfig := m("connection_url", "postgres://h", "table_name", "t", "write_mode", "upsert")
	sinkConfig.Pos = pipeline.Pos{Line: 9, Column: 13}
	sinkConfig.Fields[2].Value.Pos = pipeline.Pos{Line: 11, Column: 17}
	root := doc("pipeline", pipe(dbSource(), m("type", "db", "config", sinkConfig)), "colour", "x")
	root.Fields[len(root.Fields)-1].KeyPos = pipeline.Pos{Line: 20, Column: 1}
	_, errs := pipeline.Build(root, testCatalog())
	require.Len(t, errs, 2)
	require.Equal(t, "colour: unknown key (known keys: version, name, pool, shard, delivery, replication, retry, pipeline, params) (line 20, column 1)", errs[0].String())
	// A cross-field rule only knows the path; Build finds where the config block is.
	require.Equal(t, pipeline.FieldError{Path: "pipeline.sink.config.key", Pos: pipeline.Pos{Line: 9, Column: 13}, Message: "required when write_mode is upsert"}, errs[1])
}

func TestBuildDeferredLeaves(t *testing.T) {
	t.Parallel()
	root := doc(
		"name", deferred("${env:NAME}"),
		"pipeline", pipe(
			m("type", "db", "config", m("connection_url", deferred("${env:PG_URL}"), "query", "q", "batch_size", deferred("${env:N}"))),
			dbSink("write_mode", deferred("${env:MODE}")),
		),
	)
	cfg, errs := pipeline.Build(root, testCatalog())
	require.Empty(t, errs)
	require.Equal(t, "${env:NAME}", cfg.Name)
	require.Equal(t, "${env:PG_URL}", cfg.Source.String("connection_url"))
	require.Equal(t, "${env:MODE}", cfg.Sink.String("write_mode"))

	// A deferred required key is present: no "required" error.
	root = doc("pipeline", pipe(m("type", "db", "config", m("connection_url", deferred("${file:u}"), "query", deferred("${file:q}"))), dbSink()))
	_, errs = pipeline.Build(root, testCatalog())
	require.Empty(t, errs)
}

func TestRunWarnings(t *testing.T) {
	t.Parallel()
	require.Empty(t, pipeline.RunWarnings(&pipeline.Config{ShardCount: 1}, nil))
	require.Empty(t, pipeline.RunWarnings(nil, nil))
	w := pipeline.RunWarnings(&pipeline.Config{ShardCount: 8}, nil)
	require.Len(t, w, 1)
	require.Contains(t, w[0], "shard: ignored by sluice run")
	require.Contains(t, w[0], "runs unsharded")
}
