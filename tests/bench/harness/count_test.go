package harness_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/sluicehq/sluice/tests/bench/harness"
)

func TestCountLines(t *testing.T) {
	t.Parallel()
	tests := map[string]int64{
		"":                           0,
		"a\n":                        1,
		"a":                          1,
		"a\nb":                       2,
		"a\nb\n":                     2,
		"\n\n":                       2,
		strings.Repeat("x\n", 3<<19): 3 << 19, // longer than the 1 MiB read buffer
	}
	dir := t.TempDir()
	i := 0
	for text, want := range tests {
		i++
		p := filepath.Join(dir, "f"+string(rune('a'+i)))
		require.NoError(t, os.WriteFile(p, []byte(text), 0o600))
		got, err := harness.CountLines(p)
		require.NoError(t, err)
		require.Equal(t, want, got, "%.20q", text)
	}
}

func TestCountLinesMissingFile(t *testing.T) {
	t.Parallel()
	_, err := harness.CountLines(filepath.Join(t.TempDir(), "absent.jsonl"))
	require.ErrorContains(t, err, "absent.jsonl")
}

func TestCountSQLiteRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	p := filepath.Join(t.TempDir(), "out.db")
	db, err := sql.Open(sqliteshim.ShimName, p)
	require.NoError(t, err)
	_, err = db.ExecContext(ctx, `CREATE TABLE "rows" (id INTEGER); INSERT INTO "rows" VALUES (1), (2), (3)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	n, err := harness.CountSQLiteRows(ctx, p, "rows")
	require.NoError(t, err)
	require.Equal(t, int64(3), n)

	_, err = harness.CountSQLiteRows(ctx, p, "other")
	require.ErrorContains(t, err, "count rows of other")
	_, err = harness.CountSQLiteRows(ctx, filepath.Join(t.TempDir(), "none.db"), "rows")
	require.ErrorContains(t, err, "none.db")
}
