package state_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/state"
)

func TestEncodeDecodeRoundTripBothFormats(t *testing.T) {
	t.Parallel()
	cases := []state.Bookmark{
		{Cursor: "id", Value: int64(42)},
		{Cursor: "updated_at", Value: "2026-01-02T03:04:05Z"},
		{Cursor: "score", Value: 1.5},
	}
	for _, b := range cases {
		env, err := state.Encode(b, state.FormatEnvelope)
		require.NoError(t, err)
		got, err := state.Decode(env, "ignored")
		require.NoError(t, err)
		require.Equal(t, b, got)

		bare, err := state.Encode(b, state.FormatBare)
		require.NoError(t, err)
		got, err = state.Decode(bare, b.Cursor)
		require.NoError(t, err)
		require.Equal(t, b, got, "a bare bookmark takes its cursor from the caller")
	}
}

func TestDecodeRefusesUnknownFormats(t *testing.T) {
	t.Parallel()
	for _, in := range []string{`{"v":3,"cursor":"id","value":1}`, `{"cursor":"id"}`, `not json`, ``} {
		_, err := state.Decode([]byte(in), "id")
		require.ErrorIs(t, err, state.ErrFormat, in)
	}
	_, err := state.Encode(state.Bookmark{}, 9)
	require.ErrorIs(t, err, state.ErrFormat)
}

func TestKeys(t *testing.T) {
	t.Parallel()
	require.Equal(t, "_/orders", state.Key("", "orders"))
	require.Equal(t, "acme/orders", state.Key("acme", "orders"))
	require.Equal(t, "r1::3", state.ShardKey("r1", 3))
}
