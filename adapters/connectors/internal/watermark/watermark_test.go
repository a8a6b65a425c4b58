package watermark_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/watermark"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/state"
)

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	for _, p := range []execute.Position{
		{},
		{Rows: 42},
		{Bookmark: &state.Bookmark{Cursor: "id", Value: int64(7)}},
		{Bookmark: &state.Bookmark{Cursor: "at", Value: "2025-01-02T03:04:05Z"}, Rows: 3},
	} {
		b, rows, err := watermark.Encode(p)
		require.NoError(t, err)
		got, err := watermark.Decode(b, rows)
		require.NoError(t, err)
		require.Equal(t, p, got)
	}
	b, _, err := watermark.Encode(execute.Position{Bookmark: &state.Bookmark{Cursor: "id", Value: int64(7)}})
	require.NoError(t, err)
	require.JSONEq(t, `{"v":2,"cursor":"id","value":7}`, *b)
}

func TestDecodeRefusesGarbage(t *testing.T) {
	t.Parallel()
	bad := `{"v":9}`
	_, err := watermark.Decode(&bad, 0)
	require.ErrorIs(t, err, state.ErrFormat)
}
