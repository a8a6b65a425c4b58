package cursor_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cursor"
)

func TestCompare(t *testing.T) {
	t.Parallel()
	t1 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		a, b any
		want int
	}{
		{int64(1), int64(2), -1},
		{int64(2), int64(2), 0},
		{"9", "10", -1},     // numeric text compares as numbers
		{"10", int64(9), 1}, // mixed text and number
		{2.5, int64(2), 1},  // float and int
		{int64(5), 5.0, 0},  // equal across types
		{"abc", "abd", -1},  // text
		{"10", "abc", -1},   // one side not numeric: text order
		{nil, int64(1), -1}, // nil first
		{int64(1), nil, 1},  // nil first
		{nil, nil, 0},       // nil equal
		{json.Number("3"), int64(3), 0},
		{int64(9007199254740993), int64(9007199254740992), 1}, // beyond float precision
		{t1, t1.Add(time.Second), -1},
		{"NaN", "Inf", 1}, // not numbers: compared as text
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, cursor.Compare(tc.a, tc.b), "%#v vs %#v", tc.a, tc.b)
		require.Equal(t, -tc.want, cursor.Compare(tc.b, tc.a), "%#v vs %#v reversed", tc.b, tc.a)
	}
}

func TestEdgeBookmark(t *testing.T) {
	t.Parallel()
	vals := func(v ...any) []any { return v }
	cases := []struct {
		name    string
		values  []any
		next    any
		hasNext bool
		want    any
		ok      bool
	}{
		{"last page", vals(int64(1), int64(2)), nil, false, int64(2), true},
		{"next differs", vals(int64(1), int64(2)), int64(3), true, int64(2), true},
		{"tie steps back", vals(int64(1), int64(2), int64(2)), int64(2), true, int64(1), true},
		{"whole page tied", vals(int64(2), int64(2)), int64(2), true, nil, false},
		{"tie across types", vals(int64(1), 2.0), int64(2), true, int64(1), true},
		{"text ties", vals("a", "b", "b"), "b", true, "a", true},
		{"empty page", vals(), nil, false, nil, false},
		{"null cursors only", vals(nil, nil), int64(1), true, nil, false},
		{"nulls before values", vals(nil, int64(1)), int64(2), true, int64(1), true},
		{"trailing null is skipped", vals(int64(1), nil), nil, false, int64(1), true},
		{"tie with nulls before", vals(nil, int64(3), int64(3)), int64(3), true, nil, false},
		{"next is null", vals(int64(1)), nil, true, int64(1), true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, ok := cursor.EdgeBookmark(tc.values, tc.next, tc.hasNext)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestBookmarkValueAndText(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 1, 2, 3, 4, 5, 6, time.FixedZone("x", 3600))
	require.Equal(t, "2025-01-02T02:04:05.000000006Z", cursor.BookmarkValue(at))
	require.Equal(t, int64(3), cursor.BookmarkValue(3))
	require.Equal(t, int64(3), cursor.BookmarkValue(json.Number("3")))
	require.Equal(t, 3.5, cursor.BookmarkValue(json.Number("3.5")))
	require.Equal(t, "AQI=", cursor.BookmarkValue([]byte{1, 2}))
	require.Equal(t, "x", cursor.BookmarkValue("x"))
	require.Nil(t, cursor.BookmarkValue(nil))
	require.Equal(t, "1.5", cursor.Text(1.5))
	require.Equal(t, "true", cursor.Text(true))
	require.Equal(t, `{"a":1}`, cursor.Text(map[string]any{"a": 1}))
}
