package sqlsink_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlsink"
	"github.com/sluicehq/sluice/application/execute"
)

// dialect quotes with double quotes and refuses float32 values.
type dialect struct{}

func (dialect) Quote(s string) string { return `"` + strings.ReplaceAll(s, `"`, `""`) + `"` }
func (dialect) Value(v any) (any, error) {
	if _, ok := v.(float32); ok {
		return nil, errors.New("no float32")
	}
	if i, ok := v.(int); ok {
		return int64(i), nil
	}
	return v, nil
}

func TestBuilders(t *testing.T) {
	t.Parallel()
	d := dialect{}
	require.Equal(t, `"a", "b""c"`, sqlsink.QuoteAll(d, []string{"a", `b"c`}))
	require.Equal(t, "(?)", sqlsink.Tuple(1))
	require.Equal(t, "(?, ?, ?)", sqlsink.Tuple(3))
	require.Equal(t, `INSERT INTO "t" ("id", "name") VALUES `, sqlsink.InsertHead(d, `"t"`, []string{"id", "name"}))
	require.Equal(t, []string{"name=x", "n=x"},
		sqlsink.UpdateSet([]string{"id", "name", "k2", "n"}, []string{"id", "k2"}, func(c string) string { return c + "=x" }))
	require.Empty(t, sqlsink.UpdateSet([]string{"id"}, []string{"id"}, func(c string) string { return c }))
}

func TestCreateTable(t *testing.T) {
	t.Parallel()
	p := &execute.Page{Columns: []string{"id", "name"}, Rows: [][]any{{int64(1), "a"}}}
	colType := func(i int, key bool) string { return fmt.Sprintf("T%d%v", i, key) }
	require.Equal(t, `CREATE TABLE IF NOT EXISTS "t" ("id" T0true, "name" T1false, PRIMARY KEY ("id")) ENGINE=X`,
		sqlsink.CreateTable(dialect{}, `"t"`, []string{"id"}, p, colType, " ENGINE=X"))
	require.Equal(t, `CREATE TABLE IF NOT EXISTS "t" ("id" T0false, "name" T1false)`,
		sqlsink.CreateTable(dialect{}, `"t"`, nil, p, colType, ""))
}

func TestAppendRow(t *testing.T) {
	t.Parallel()
	cols := []string{"id", "x"}
	args, err := sqlsink.AppendRow([]any{"before"}, dialect{}, cols, []any{1, "a"})
	require.NoError(t, err)
	require.Equal(t, []any{"before", int64(1), "a"}, args)

	_, err = sqlsink.AppendRow(nil, dialect{}, cols, []any{1})
	require.EqualError(t, err, "row has 1 values for 2 columns")
	_, err = sqlsink.AppendRow(nil, dialect{}, cols, []any{1, float32(2)})
	require.EqualError(t, err, `column "x": no float32`)
}

func TestKeys(t *testing.T) {
	t.Parallel()
	cols := []string{"a", "id", "b", "k"}
	key := []string{"k", "id"}
	pos := sqlsink.KeyPositions(cols, key)
	require.Equal(t, []int{3, 1}, pos)
	args, err := sqlsink.AppendKey(nil, dialect{}, key, pos, []any{"x", 7, "y", "z"})
	require.NoError(t, err)
	require.Equal(t, []any{"z", int64(7)}, args)
	_, err = sqlsink.AppendKey(nil, dialect{}, key, pos, []any{"x", 7, "y", float32(1)})
	require.EqualError(t, err, `column "k": no float32`)

	k, ok := sqlsink.MissingKey(cols, []string{"id", "nope", "gone"})
	require.True(t, ok)
	require.Equal(t, "nope", k)
	_, ok = sqlsink.MissingKey(cols, key)
	require.False(t, ok)
}

func TestValue(t *testing.T) {
	t.Parallel()
	for _, v := range []any{int(-3), int32(-3), int16(-3), int8(-3)} {
		got, err := sqlsink.Value(v)
		require.NoError(t, err)
		require.Equal(t, int64(-3), got)
	}
	got, err := sqlsink.Value(uint32(7))
	require.NoError(t, err)
	require.Equal(t, int64(7), got)
	got, err = sqlsink.Value(map[string]any{"a": []any{int64(1), "x"}})
	require.NoError(t, err)
	require.Equal(t, `{"a":[1,"x"]}`, got)
	got, err = sqlsink.Value([]string{"a", "b"})
	require.NoError(t, err)
	require.Equal(t, `["a","b"]`, got)
	_, err = sqlsink.Value(struct{}{})
	require.EqualError(t, err, "unsupported value type struct {}")
	_, err = sqlsink.Value(complex(1, 2))
	require.EqualError(t, err, "unsupported value type complex128")
}
