package bootstrap_test

import (
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun/driver/sqliteshim"
)

type migrateJSON struct {
	Applied     []string `json:"applied"`
	Pending     []string `json:"pending"`
	Unknown     []string `json:"unknown"`
	BinaryOlder bool     `json:"binary_older"`
	AppliedNow  []string `json:"applied_now"`
	Schema      string   `json:"schema"`
}

func parseMigrate(t *testing.T, stdout string) migrateJSON {
	t.Helper()
	var m migrateJSON
	require.NoError(t, json.Unmarshal([]byte(stdout), &m), stdout)
	return m
}

func TestMigrateUpAndStatus(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")

	code, _, stderr := run(t, nil, "migrate", "status", "--data-dir", data)
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "no history at "+filepath.Join(data, "history.db"))
	_, err := os.Stat(data)
	require.ErrorIs(t, err, os.ErrNotExist, "status creates nothing")

	code, stdout, stderr := run(t, nil, "migrate", "up", "--data-dir", data, "--json")
	require.Equal(t, 0, code, stderr)
	up := parseMigrate(t, stdout)
	require.NotEmpty(t, up.Applied)
	require.Equal(t, up.Applied, up.AppliedNow)
	require.Empty(t, up.Pending)
	require.Equal(t, "up_to_date", up.Schema)

	code, stdout, stderr = run(t, nil, "migrate", "up", "--data-dir", data)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "is up to date")

	code, stdout, stderr = run(t, map[string]string{"SLUICE_HISTORY": "sqlite:" + filepath.Join(data, "history.db")},
		"migrate", "status")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, stdout, "applied ("+strconv.Itoa(len(up.Applied))+"):")
	require.Contains(t, stdout, up.Applied[0])
	require.Contains(t, stdout, "pending (0):")
	require.Contains(t, stdout, "schema: up to date")
}

// A history migrated by a newer binary: status says this binary is older, and serve
// refuses it naming `sluice migrate status`.
func TestNewerSchemaIsRefused(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	code, _, stderr := run(t, nil, "migrate", "up", "--data-dir", data)
	require.Equal(t, 0, code, stderr)
	db, err := sql.Open(sqliteshim.ShimName, filepath.Join(data, "history.db"))
	require.NoError(t, err)
	_, err = db.Exec(`INSERT INTO sluice_migrations (name, group_id) VALUES ('9999', 9)`)
	require.NoError(t, err)
	require.NoError(t, db.Close())

	code, stdout, stderr := run(t, nil, "migrate", "status", "--data-dir", data, "--json")
	require.Equal(t, 0, code, stderr)
	st := parseMigrate(t, stdout)
	require.True(t, st.BinaryOlder)
	require.Equal(t, []string{"9999"}, st.Unknown)
	require.Equal(t, "newer_than_binary", st.Schema)

	code, stdout, _ = run(t, nil, "migrate", "status", "--data-dir", data)
	require.Equal(t, 0, code)
	require.Contains(t, stdout, "older than the schema")

	for _, extra := range [][]string{nil, {"--no-migrate"}} {
		args := append([]string{"serve", "--data-dir", data, "--no-auth", "--listen", freeAddr(t)}, extra...)
		code, _, stderr = run(t, nil, args...)
		require.Equal(t, 1, code, stderr)
		require.Contains(t, stderr, "sluice migrate status")
	}
}

func TestServeNoMigrateRefusesAnUnmigratedHistory(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	code, _, stderr := run(t, nil, "serve", "--data-dir", data, "--no-auth", "--no-migrate", "--listen", freeAddr(t))
	require.Equal(t, 1, code, stderr)
	require.Contains(t, stderr, "sluice migrate up")
}

func TestMigrateRefusesMemoryAndBadURLs(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"migrate", "up", "--history", "memory"},
		{"migrate", "status", "--history", "mongodb://x"},
		{"migrate", "status", "--data-dir", ""},
	} {
		code, _, stderr := run(t, nil, args...)
		require.Equal(t, 2, code, stderr)
		require.Contains(t, stderr, "invalid value for --")
	}
}
