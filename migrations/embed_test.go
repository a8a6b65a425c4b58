package migrations_test

import (
	"io/fs"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/migrations"
)

var migrationName = regexp.MustCompile(`^(\d{4})_[a-z0-9_]+\.up\.sql$`)

func ids(t *testing.T, fsys fs.FS, dir string) []string {
	t.Helper()
	entries, err := fs.ReadDir(fsys, dir)
	require.NoError(t, err)
	var out []string
	for _, e := range entries {
		m := migrationName.FindStringSubmatch(e.Name())
		require.NotNil(t, m, "%s/%s does not match NNNN_name.up.sql", dir, e.Name())
		out = append(out, e.Name())
	}
	return out
}

// The two dialects must carry the same migrations under the same ids, or a history
// moved between them (or a binary's status report) would disagree.
func TestDialectsHaveIdenticalMigrationIDs(t *testing.T) {
	t.Parallel()
	pg := ids(t, migrations.Postgres, "postgres")
	lite := ids(t, migrations.SQLite, "sqlite")
	require.NotEmpty(t, pg)
	require.Equal(t, pg, lite)
}
