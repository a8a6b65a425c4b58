package suites_test

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/configtext"
	"github.com/sluicehq/sluice/adapters/connectors/builtin"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/tests/bench/suites"
)

type noEnv struct{}

func (noEnv) LookupEnv(string) (string, bool)   { return "", false }
func (noEnv) ReadFile(p string) ([]byte, error) { return os.ReadFile(p) }

func TestRegistry(t *testing.T) {
	t.Parallel()
	reg, err := suites.Registry()
	require.NoError(t, err)
	require.Equal(t, "foundation", reg.Names()[0], "foundation is the default suite")
	s, err := reg.Lookup("foundation")
	require.NoError(t, err)
	var ids []string
	for _, c := range s.Cases {
		ids = append(ids, c.ID)
	}
	require.Equal(t, []string{"gen-jsonl", "csv-jsonl", "csv-sqlite", "baseline"}, ids)
	require.True(t, s.Cases[3].Baseline)
}

// Every config the suite writes must be one sluice accepts, with the row count in it.
func TestFoundationPipelinesAreValidConfigs(t *testing.T) {
	t.Parallel()
	registry := builtin.Registry()
	loader := &execute.Loader{Decoder: configtext.Decoder{}, Env: noEnv{}, Catalog: registry}
	pipelines := suites.FoundationPipelines(1234)
	require.Len(t, pipelines, 4)
	for id, p := range pipelines {
		text, err := p.YAML()
		require.NoError(t, err, id)
		cfg, err := loader.Load(context.Background(), text, execute.LoadOptions{BaseDir: t.TempDir(), Logical: time.Now()})
		require.NoError(t, err, "%s:\n%s", id, text)
		require.Equal(t, p.Name, cfg.Name)
		require.Equal(t, p.Source.Type, cfg.Source.Type, id)
		require.Equal(t, p.Sink.Type, cfg.Sink.Type, id)
		if p.Source.Type == "generate" {
			require.Contains(t, string(text), "count: 1234", id)
		}
	}
}
