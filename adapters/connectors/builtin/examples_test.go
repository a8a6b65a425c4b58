package builtin_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The worked examples of the streaming connectors validate against the registry.
func TestStreamExamplesValidate(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob(filepath.Join("..", "..", "..", "examples", "streams", "*.yaml"))
	require.NoError(t, err)
	require.Len(t, paths, 2)
	for _, p := range paths {
		data, err := os.ReadFile(p)
		require.NoError(t, err)
		// The environment a user runs them with.
		text := strings.NewReplacer("${env:KAFKA_BROKERS}", "127.0.0.1:9092", "${env:PG_URL}", "postgres://u@127.0.0.1/db",
			"${env:API_TOKEN}", "t").Replace(string(data))
		_, errs := build(t, text)
		require.Empty(t, errs, p)
	}
}
