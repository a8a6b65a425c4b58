package cli_test

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/cli"
)

func execKeygen(t *testing.T, gen func() (string, error), args ...string) (int, string, string) {
	t.Helper()
	root := cli.NewRoot(cli.Info{Version: "v1"})
	root.AddCommand(cli.NewKeygenCommand(gen))
	var stdout, stderr bytes.Buffer
	code := cli.Execute(context.Background(), root, append([]string{"keygen"}, args...), cli.Env{
		Stdin: &bytes.Buffer{}, Stdout: &stdout, Stderr: &stderr,
	})
	return code, stdout.String(), stderr.String()
}

func TestKeygenPrintsTheKeyAloneOnStdout(t *testing.T) {
	t.Parallel()
	const key = "q83vEjRWeJq83vEjRWeJq83vEjRWeJq83vEjRWeJq80="
	code, stdout, stderr := execKeygen(t, func() (string, error) { return key, nil })
	require.Equal(t, cli.ExitOK, code)
	require.Equal(t, key+"\n", stdout)
	require.Contains(t, stderr, "--vault-key")
	require.Contains(t, stderr, "SLUICE_VAULT_KEY")
	require.Contains(t, stderr, "every member")
	require.NotContains(t, stderr, key, "the hint does not repeat the key")
	require.Equal(t, 1, bytes.Count([]byte(stderr), []byte("\n")), "a one-line hint")
}

func TestKeygenFailures(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := execKeygen(t, func() (string, error) { return "", errors.New("entropy source closed") })
	require.Equal(t, cli.ExitFailure, code)
	require.Empty(t, stdout)
	require.Contains(t, stderr, "error: generate a vault key: entropy source closed")

	called := false
	code, stdout, stderr = execKeygen(t, func() (string, error) { called = true; return "k", nil }, "extra")
	require.Equal(t, cli.ExitUsage, code, "keygen takes no arguments")
	require.False(t, called)
	require.Empty(t, stdout)
	require.Contains(t, stderr, `unknown command "extra"`)
}
