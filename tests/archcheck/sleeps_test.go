package archcheck_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/archcheck"
)

// sleepAllowed lists the only test functions that may call time.Sleep, by "file func",
// each with why no event or fake clock can stand in. Everything else waits on an event
// (a channel, cluster.Events, a store hook) or a fake clock.
var sleepAllowed = map[string]string{
	"tests/e2e/cluster_test.go awaitMetric": "polls another process's /metrics with a 20 s overall " +
		"deadline: no event crosses from a sluice process's counters to the test",
	"adapters/store/sqlitegate_internal_test.go TestSQLiteWritersOfOneProcessTakeTurns": "holds a SQLite " +
		"write transaction past busy_timeout, SQLite's own wall-clock limit, to show the process's other " +
		"writers wait their turn beyond it; a lower bound, nothing asserts how long anything took",
	"tests/e2e/sql_test.go stopBetweenCommits": "lets a process resumed with SIGCONT run before it is " +
		"stopped again; it paces a retry and asserts nothing about time",
}

// TestNoSleepInTests fails when a test file calls time.Sleep outside sleepAllowed, so
// "sleep then hope" and "sleep then assert nothing happened" do not come back.
func TestNoSleepInTests(t *testing.T) {
	t.Parallel()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	seen := map[string]bool{}
	var found []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if name := d.Name(); path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sleeps, err := archcheck.Sleeps(path, src)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, s := range sleeps {
			key := filepath.ToSlash(rel) + " " + s.Func
			if sleepAllowed[key] != "" {
				seen[key] = true
				continue
			}
			found = append(found, filepath.ToSlash(rel)+":"+strconv.Itoa(s.Line)+" in "+s.Func)
		}
		return nil
	})
	require.NoError(t, err)
	require.Empty(t, found, "time.Sleep in a test: wait on an event or a fake clock instead "+
		"(or add it to sleepAllowed with the reason none can stand in)")
	for key := range sleepAllowed {
		require.True(t, seen[key], "sleepAllowed names %q, which no longer sleeps: remove it", key)
	}
}

// The finder sees a renamed import and ignores a Sleep of another package or in a string.
func TestSleepsFindsEveryCallOfTimeSleep(t *testing.T) {
	t.Parallel()
	src := `package x

import (
	clock "time"
	"other"
)

const prog = "time.Sleep(1)"

func wait() {
	clock.Sleep(clock.Millisecond)
	other.Sleep(1)
}

var _ = func() { clock.Sleep(0) }
`
	got, err := archcheck.Sleeps("x_test.go", []byte(src))
	require.NoError(t, err)
	require.Equal(t, []archcheck.Sleep{{Func: "wait", Line: 11}, {Func: "", Line: 15}}, got)
}
