package conntest_test

import (
	"errors"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/application/execute"
)

func TestWith(t *testing.T) {
	t.Parallel()
	base := map[string]any{"a": 1, "b": 2}
	got := conntest.With(base, "b", 3, "c", 4)
	require.Equal(t, map[string]any{"a": 1, "b": 3, "c": 4}, got)
	require.Equal(t, map[string]any{"a": 1, "b": 2}, base, "the base stays as it was")
}

func TestPages(t *testing.T) {
	t.Parallel()
	p := conntest.Page([]string{"id"}, []any{int64(1)}, []any{int64(2)})
	require.Equal(t, &execute.Page{Columns: []string{"id"}, Rows: [][]any{{int64(1)}, {int64(2)}}}, p)
	require.Equal(t, [][]any{{int64(1)}, {int64(2)}, {int64(3)}}, conntest.AllRows([]*execute.Page{p, conntest.Numbered(3, 3)}))
	require.Empty(t, conntest.Numbered(2, 1).Rows)
}

func TestReadBack(t *testing.T) {
	t.Parallel()
	exists := false
	rb := conntest.ReadBack(func(*testing.T) bool { return exists },
		func(_ *testing.T, cols []string) [][]any { return [][]any{{len(cols)}} })
	rows, ok := rb(t, []string{"a", "b"})
	require.False(t, ok)
	require.Nil(t, rows)
	exists = true
	rows, ok = rb(t, []string{"a", "b"})
	require.True(t, ok)
	require.Equal(t, [][]any{{2}}, rows)
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	var seen sync.Map
	run := func(_ *testing.T, cfg map[string]any, pages ...*execute.Page) error {
		seen.Store(cfg["name"], len(pages))
		return errors.New("refused " + cfg["name"].(string))
	}
	t.Run("cases", func(t *testing.T) {
		conntest.Refusals(t, run, []conntest.Refusal{
			{Name: "no page", Config: map[string]any{"name": "a"}, Want: "refused a"},
			{Name: "one page", Config: map[string]any{"name": "b"}, Page: conntest.Numbered(1, 1), Want: "refused b"},
		})
	})
	a, _ := seen.Load("a")
	b, _ := seen.Load("b")
	require.Equal(t, 0, a)
	require.Equal(t, 1, b)
}
