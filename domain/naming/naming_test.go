package naming_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/naming"
)

func TestValid(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		"orders-mirror": true, "a": true, "0": true, "eu.west_1-x": true,
		strings.Repeat("a", 63): true, strings.Repeat("a", 64): false,
		"": false, "-a": false, "_a": false, ".a": false, "Orders": false, "a b": false, "a/b": false, "é": false,
	}
	for name, want := range cases {
		require.Equal(t, want, naming.Valid(name), name)
	}
	require.NoError(t, naming.Check("pool", "gpu"))
	err := naming.Check("pool", "GPU")
	require.ErrorContains(t, err, `pool "GPU" is not a valid name`)
}
