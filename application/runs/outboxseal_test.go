package runs_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
)

// SPEC §14.1: with a vault key an outbox row holds neither the callback URL (which may
// carry credentials) nor the payload in clear; the delivering member opens it.
func TestOutboxRowsAreSealedWithAVaultKey(t *testing.T) {
	t.Parallel()
	sealer := fakeSealer{id: "k1"}
	in := runs.CallbackInput{RunID: "run-1", Name: "orders-private", Status: "completed",
		Callback: &runs.Callback{URL: "https://hook-user:hook-pass@hooks.example.com/x?sig=abc"}}
	url, payload, ok := runs.CallbackBuilderFor(sealer)(in)
	require.True(t, ok)
	require.Equal(t, runs.SealedOutboxURL, url)
	for _, clear := range []string{"hook-pass", "hooks.example.com", "orders-private", "run_id"} {
		require.NotContains(t, string(payload), clear)
	}

	gotURL, gotBody, err := runs.OpenOutbox(context.Background(), sealer, "run-1", url, payload)
	require.NoError(t, err)
	require.Equal(t, in.Callback.URL, gotURL)
	require.Contains(t, string(gotBody), `"name":"orders-private"`)

	_, _, err = runs.OpenOutbox(context.Background(), sealer, "run-2", url, payload)
	require.ErrorIs(t, err, runs.ErrVaultTampered, "bound to its run")
	_, _, err = runs.OpenOutbox(context.Background(), fakeSealer{id: "k2"}, "run-1", url, payload)
	var missing *runs.VaultKeyMissingError
	require.ErrorAs(t, err, &missing, "another key")
	_, _, err = runs.OpenOutbox(context.Background(), nil, "run-1", url, payload)
	require.ErrorAs(t, err, &missing, "no key")

	// Without a key (no sealer, or a keyless one) the row stays as built.
	for _, s := range []runs.Sealer{nil, fakeSealer{}} {
		url, payload, ok := runs.CallbackBuilderFor(s)(in)
		require.True(t, ok)
		require.Equal(t, in.Callback.URL, url)
		gotURL, gotBody, err := runs.OpenOutbox(context.Background(), s, "run-1", url, payload)
		require.NoError(t, err)
		require.Equal(t, url, gotURL)
		require.Equal(t, payload, gotBody)
	}
}
