package harness_test

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/sluicehq/sluice/tests/bench/harness"
)

func TestPipelineYAML(t *testing.T) {
	t.Parallel()
	p := harness.Pipeline{
		Name:   "bench-x",
		Source: harness.Connector{Type: "file", Config: map[string]any{"path": "in: odd #.csv"}},
		Sink:   harness.Connector{Type: "sqlite", Config: map[string]any{"connection_url": "sqlite:out.db", "create_table": true}},
	}
	text, err := p.YAML()
	require.NoError(t, err)
	var doc map[string]any
	require.NoError(t, yaml.Unmarshal(text, &doc))
	require.Equal(t, map[string]any{
		"version": 1,
		"name":    "bench-x",
		"pipeline": map[string]any{
			"source": map[string]any{"type": "file", "config": map[string]any{"path": "in: odd #.csv"}},
			"sink": map[string]any{"type": "sqlite", "config": map[string]any{
				"connection_url": "sqlite:out.db", "create_table": true}},
		},
	}, doc)
}

func TestWritePipelineAndRemoveOutputs(t *testing.T) {
	t.Parallel()
	env := &harness.Env{Dir: t.TempDir()}
	name, err := env.WritePipeline(harness.Pipeline{Name: "bench-y",
		Source: harness.Connector{Type: "generate", Config: map[string]any{"count": 3}},
		Sink:   harness.Connector{Type: "file", Config: map[string]any{"path": "o.jsonl"}}})
	require.NoError(t, err)
	require.Equal(t, "bench-y.yaml", name)
	require.FileExists(t, env.Path(name))

	for _, f := range []string{"out.db", "out.db-wal", "out.db-shm", "keep.db"} {
		require.NoError(t, os.WriteFile(env.Path(f), nil, 0o600))
	}
	require.NoError(t, env.RemoveOutputs("out.db", "absent.jsonl"))
	require.NoFileExists(t, env.Path("out.db"))
	require.NoFileExists(t, env.Path("out.db-wal"))
	require.NoFileExists(t, env.Path("out.db-shm"))
	require.FileExists(t, env.Path("keep.db"))
}
