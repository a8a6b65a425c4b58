package store_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/approvals"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/shard"
)

var (
	// status = 'x', status <> 'x', q.status = 'x' (a column named status, any alias).
	statusEq = regexp.MustCompile(`(?i)\bstatus\s*(?:=|<>|!=)\s*'([a-z_]+)'`)
	// status IN ('a', 'b'), status NOT IN (…).
	statusIn = regexp.MustCompile(`(?i)\bstatus\s+(?:NOT\s+)?IN\s*\(([^)]*)\)`)
	// status = CASE … END: every literal the CASE can set.
	statusCase = regexp.MustCompile(`(?is)\bstatus\s*=\s*CASE\b(.*?)\bEND\b`)
	quoted     = regexp.MustCompile(`'([a-z_]+)'`)
)

// storeSQL returns every string literal of the store's production files: the SQL text it
// sends, whole or in pieces.
func storeSQL(t *testing.T) map[string][]string {
	t.Helper()
	fset := token.NewFileSet()
	entries, err := os.ReadDir(".")
	require.NoError(t, err)
	out := map[string][]string{}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		require.NoError(t, err)
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				s, err := strconv.Unquote(lit.Value)
				require.NoError(t, err)
				out[name] = append(out[name], s)
			}
			return true
		})
	}
	return out
}

func names[T ~string](list []T, keep func(T) bool) []string {
	var out []string
	for _, v := range list {
		if keep(v) {
			out = append(out, string(v))
		}
	}
	slices.Sort(out)
	return out
}

// TestSQLStatusListsAreTheDomains holds the store's hand-written SQL to the domain's
// lifecycles: every status literal it compares or sets is a status the domain has, and
// every IN list is one of the sets the domain defines (terminal, active, …). A status
// added to (or renamed in) the domain fails here until the SQL that must know it does.
func TestSQLStatusListsAreTheDomains(t *testing.T) {
	t.Parallel()
	all := func(run.Status) bool { return true }
	known := names(run.Statuses(), all)
	known = append(known, names(shard.Statuses(), func(shard.Status) bool { return true })...)
	known = append(known, names(approvals.Statuses(), func(approvals.Status) bool { return true })...)

	// The sets an IN list may spell, each derived from the domain's own rules.
	sets := map[string][]string{
		"run terminal": names(run.Statuses(), run.Status.Terminal),
		"run active":   names(run.Statuses(), run.Status.Active),
		// A run holds or waits for its pipeline key until it ends.
		"run not terminal": names(run.Statuses(), func(s run.Status) bool { return !s.Terminal() }),
		// What a run is created in and has not been claimed from yet.
		"run unclaimed": names(run.Statuses(), func(s run.Status) bool { return run.CanTransition(run.StatusNew, s) }),
		// Claimed and owned by a member (directly, or through its shards).
		"run owned":          names(run.Statuses(), func(s run.Status) bool { return s.Active() && !run.CanTransition(run.StatusNew, s) }),
		"shard terminal":     names(shard.Statuses(), shard.Status.Terminal),
		"shard not terminal": names(shard.Statuses(), func(s shard.Status) bool { return !s.Terminal() }),
	}

	seen := 0
	for file, lits := range storeSQL(t) {
		for _, sql := range lits {
			var single []string
			for _, m := range statusEq.FindAllStringSubmatch(sql, -1) {
				single = append(single, m[1])
			}
			for _, m := range statusCase.FindAllStringSubmatch(sql, -1) {
				for _, q := range quoted.FindAllStringSubmatch(m[1], -1) {
					single = append(single, q[1])
				}
			}
			for _, s := range single {
				seen++
				require.Contains(t, known, s, "%s: status literal %q is not a status of the domain: %s", file, s, sql)
			}
			for _, m := range statusIn.FindAllStringSubmatch(sql, -1) {
				seen++
				var list []string
				for _, q := range quoted.FindAllStringSubmatch(m[1], -1) {
					require.Contains(t, known, q[1], "%s: status literal %q is not a status of the domain: %s", file, q[1], sql)
					list = append(list, q[1])
				}
				if len(list) == 0 {
					continue // bound parameters: the caller's values, parsed by the domain
				}
				slices.Sort(list)
				matched := false
				for _, set := range sets {
					if slices.Equal(list, set) {
						matched = true
					}
				}
				require.True(t, matched, "%s: the status list %v is none of the domain's sets %v: %s", file, list, sets, sql)
			}
		}
	}
	// The scan itself must find the SQL, or it proves nothing.
	require.Greater(t, seen, 30, "the store's status literals were not found")
}
