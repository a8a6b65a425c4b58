package pipeline_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/pipeline"
)

func shardCatalog() catalog {
	return catalog{
		"sql":  {Type: "sql", Roles: pipeline.RoleBoth, Shardable: true, KeyRanges: true, ExactlyOnce: true},
		"file": {Type: "file", Roles: pipeline.RoleBoth, Shardable: true, SingleObject: true},
		"gen":  {Type: "gen", Roles: pipeline.RoleSource},
	}
}

// sharded is a config that may run sharded: an upsert of a key-range source.
func sharded(edit func(*pipeline.Config)) *pipeline.Config {
	c := &pipeline.Config{ShardCount: 4, Delivery: pipeline.AtLeastOnce, Replication: pipeline.Replication{Type: pipeline.Full},
		Source: pipeline.Connector{Type: "sql", Config: map[string]any{"shard": map[string]any{"key": "id"}}},
		Sink:   pipeline.Connector{Type: "sql", Config: map[string]any{"write_mode": "upsert", "key": []string{"id"}}}}
	if edit != nil {
		edit(c)
	}
	return c
}

func TestShardRefusal(t *testing.T) {
	t.Parallel()
	cat := shardCatalog()
	require.Nil(t, pipeline.ShardRefusal(sharded(nil), cat), "an upsert of key ranges runs sharded")
	allowed := map[string]func(*pipeline.Config){
		"count 1 is unsharded":          func(c *pipeline.Config) { c.ShardCount = 1; c.Sink.Type = "file" },
		"a source that cannot be split": func(c *pipeline.Config) { c.Source.Type = "gen"; c.Sink.Type = "file" },
		"incremental without state": func(c *pipeline.Config) {
			c.Replication = pipeline.Replication{Type: pipeline.Incremental, Cursor: "at"}
		},
		"exactly once by upsert":         func(c *pipeline.Config) { c.Delivery = pipeline.ExactlyOnce },
		"hashed files into a keyed sink": func(c *pipeline.Config) { c.Source = pipeline.Connector{Type: "file", Config: map[string]any{}} },
		"hashed files, incremental with state": func(c *pipeline.Config) {
			c.Source = pipeline.Connector{Type: "file", Config: map[string]any{}}
			c.Replication = pipeline.Replication{Type: pipeline.Incremental, Cursor: "at"}
			c.State = pipeline.State{Type: pipeline.StateHistory}
		},
	}
	for name, edit := range allowed {
		require.Nil(t, pipeline.ShardRefusal(sharded(edit), cat), name)
	}
	refused := map[string]struct {
		edit func(*pipeline.Config)
		want string
	}{
		"incremental with a state block": {func(c *pipeline.Config) {
			c.Replication = pipeline.Replication{Type: pipeline.Incremental, Cursor: "at"}
			c.State = pipeline.State{Key: "orders"}
		}, "use replication: {type: full}"},
		"a file sink":            {func(c *pipeline.Config) { c.Sink = pipeline.Connector{Type: "file", Config: map[string]any{}} }, "write to a SQL sink or remove shard"},
		"exactly once by append": {func(c *pipeline.Config) { c.Delivery = pipeline.ExactlyOnce; c.Sink.Config["write_mode"] = "append" }, "set write_mode: upsert"},
		"overwrite":              {func(c *pipeline.Config) { c.Sink.Config["write_mode"] = "overwrite" }, "each shard replace the rows the others wrote"},
		"no shard key":           {func(c *pipeline.Config) { delete(c.Source.Config, "shard") }, "pipeline.source.config.shard.key is not set"},
	}
	for name, tc := range refused {
		r := pipeline.ShardRefusal(sharded(tc.edit), cat)
		require.NotNil(t, r, name)
		require.Len(t, r.Reasons, 1, name)
		require.Contains(t, r.Error(), tc.want, name)
		require.True(t, errors.Is(r, pipeline.ErrShardRefused), name)
	}
}

func TestRunWarningsListRefusals(t *testing.T) {
	t.Parallel()
	c := sharded(func(c *pipeline.Config) { c.Sink = pipeline.Connector{Type: "file", Config: map[string]any{}} })
	w := pipeline.RunWarnings(c, shardCatalog())
	require.Len(t, w, 2)
	require.Contains(t, w[0], "shard: ignored by sluice run (count 4)")
	require.Contains(t, w[1], "a server would refuse this config")
	require.Len(t, pipeline.RunWarnings(c, nil), 1, "without a catalog only the ignore warning")
}
