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
		{CompletedBy: "0190f0c4-7d2a-7000-8000-000000000001::3"},
	} {
		r, err := watermark.Encode(p)
		require.NoError(t, err)
		got, err := watermark.Decode(r)
		require.NoError(t, err)
		require.Equal(t, p, got)
	}
	r, err := watermark.Encode(execute.Position{Bookmark: &state.Bookmark{Cursor: "id", Value: int64(7)}})
	require.NoError(t, err)
	require.JSONEq(t, `{"v":2,"cursor":"id","value":7}`, *r.Bookmark)
	require.Nil(t, r.CompletedBy, "a read in progress stores NULL")
}

func TestDecodeRefusesGarbage(t *testing.T) {
	t.Parallel()
	bad := `{"v":9}`
	_, err := watermark.Decode(watermark.Row{Bookmark: &bad})
	require.ErrorIs(t, err, state.ErrFormat)
}
