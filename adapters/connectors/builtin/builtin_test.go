package builtin_test

import (
	"bytes"
	"context"
	"errors"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/builtin"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

func TestRegistry(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	r := builtin.Registry(builtin.WithStdout(&out))
	require.Equal(t, []string{"file", "generate", "http", "kafka", "mysql", "postgres", "s3", "sqlite"}, r.Types(pipeline.RoleSource))
	require.Equal(t, []string{"file", "kafka", "mysql", "postgres", "s3", "sqlite", "stdout"}, r.Types(pipeline.RoleSink))
	require.Len(t, r.Specs(), 9)

	// generate → stdout through the registry.
	gen, ok := r.Source("generate")
	require.True(t, ok)
	src, err := gen.OpenSource(context.Background(), execute.ReadRequest{Config: map[string]any{"count": 2, "columns": []any{"id"}}})
	require.NoError(t, err)
	defer src.Close()
	p, err := src.Next(context.Background())
	require.NoError(t, err)
	std, ok := r.Sink("stdout")
	require.True(t, ok)
	snk, err := std.OpenSink(context.Background(), execute.WriteRequest{})
	require.NoError(t, err)
	require.NoError(t, snk.Write(context.Background(), p))
	require.Equal(t, "{\"id\":1}\n{\"id\":2}\n", out.String())
}

func TestURLCheckReachesTheFileConnector(t *testing.T) {
	t.Parallel()
	r := builtin.Registry(builtin.WithURLCheck(func(_ context.Context, u *url.URL) error {
		return errors.New("host " + u.Hostname() + " is not allowed")
	}))
	f, _ := r.Source("file")
	_, err := f.OpenSource(context.Background(), execute.ReadRequest{Config: map[string]any{"path": "http://169.254.169.254/x.csv"}})
	require.ErrorContains(t, err, "host 169.254.169.254 is not allowed")
}
