package store

import (
	"io/fs"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/approvals"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/schedule"
	"github.com/sluicehq/sluice/domain/shard"
	"github.com/sluicehq/sluice/migrations"
)

// statusCheck finds `CONSTRAINT? name ... CHECK (status IN ('a', 'b'))` in a migration.
var statusCheck = regexp.MustCompile(`(?s)(sluice_[a-z_]+_status_check)\s+CHECK \(status IN \(([^)]*)\)\)`)

// The status lists of migration 0023's CHECK constraints are the domains' lists, in
// both dialects: a status added to a domain without a migration widening its constraint
// would be refused by the history at its first write, so this fails first.
func TestCheckConstraintStatusListsMatchTheDomain(t *testing.T) {
	want := map[string][]string{
		"sluice_runs_status_check":            strs(run.Statuses()),
		"sluice_shards_status_check":          strs(shard.Statuses()),
		"sluice_schedule_ticks_status_check":  strs(schedule.Outcomes()),
		"sluice_change_requests_status_check": strs(approvals.Statuses()),
	}
	for name, fsys := range map[string]fs.FS{"postgres": migrations.Postgres, "sqlite": migrations.SQLite} {
		text, err := fs.ReadFile(fsys, name+"/0023_check_constraints.up.sql")
		require.NoError(t, err)
		got := map[string][]string{}
		for _, m := range statusCheck.FindAllStringSubmatch(string(text), -1) {
			var list []string
			for _, v := range strings.Split(m[2], ",") {
				list = append(list, strings.Trim(strings.TrimSpace(v), "'"))
			}
			got[m[1]] = list
		}
		for c, w := range want {
			require.ElementsMatch(t, w, got[c], "%s: %s", name, c)
		}
		require.Len(t, got, len(want), name)
	}
}

func strs[S ~string](in []S) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = string(s)
	}
	return out
}
