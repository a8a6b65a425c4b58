package bootstrap_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/vault"
)

func TestKeygenPrintsAKeyTheVaultTakes(t *testing.T) {
	t.Parallel()
	code, first, stderr := run(t, nil, "keygen")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stderr, "--vault-key")
	key, err := vault.ParseKey(first)
	require.NoError(t, err)
	require.Len(t, key, vault.KeySize)
	_, err = vault.FromBase64(strings.TrimSpace(first))
	require.NoError(t, err)

	_, second, _ := run(t, nil, "keygen")
	require.NotEqual(t, first, second, "every call makes a new key")
}
