package e2e_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/telemetry/otlptest"
)

// readmeFence is the opening line of one fenced block of a Markdown text.
type readmeFence struct {
	line int
	info string // what follows the backticks: the language and its attributes
}

var (
	// shellLang names the languages whose blocks a reader would paste into a shell.
	shellLang = regexp.MustCompile(`^(?:sh|bash|shell|console|zsh)\b`)
	// skipMarker is a shell block the test cannot run here, with the reason why.
	skipMarker = regexp.MustCompile(`^sh \{skip="[^"]+"\}$`)
)

// readmeFences lists the opening fences of the text at path (a fence line opens a block
// or closes the open one).
func readmeFences(t *testing.T, path string) []readmeFence {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var fences []readmeFence
	open := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		text := sc.Text()
		if !strings.HasPrefix(text, "```") {
			continue
		}
		if !open {
			fences = append(fences, readmeFence{line: n, info: strings.TrimSpace(strings.TrimPrefix(text, "```"))})
		}
		open = !open
	}
	require.NoError(t, sc.Err())
	require.False(t, open, "%s ends inside a fenced block", path)
	return fences
}

// fenceProblems names every fence that escapes the README test: a block without a
// language (a reader cannot tell commands from a picture), and a shell block that is
// neither run (```sh {test}) nor marked with why it cannot run here (```sh {skip="…"}).
func fenceProblems(fences []readmeFence) []string {
	var problems []string
	for _, f := range fences {
		switch {
		case f.info == "":
			problems = append(problems, fmt.Sprintf("line %d: a block without a language "+
				"(```text for a picture or a listing, ```sh {test} for commands)", f.line))
		case shellLang.MatchString(f.info) && f.info != "sh {test}" && !skipMarker.MatchString(f.info):
			problems = append(problems, fmt.Sprintf("line %d: ```%s is neither run by this test (```sh {test}) "+
				"nor marked ```sh {skip=\"why it cannot run here\"}", f.line, f.info))
		}
	}
	return problems
}

// Every block of commands in the README is either run as written or says why it cannot
// be, so a command the tour shows can no longer go stale unseen.
func TestReadmeShellBlocksAreTestedOrSkipped(t *testing.T) {
	t.Parallel()
	fences := readmeFences(t, filepath.Join("..", "..", "README.md"))
	require.NotEmpty(t, fences)
	require.Empty(t, fenceProblems(fences), "README.md")
}

// The rule catches each way a block can escape it, and lets the marked ones through.
func TestFenceProblems(t *testing.T) {
	t.Parallel()
	got := fenceProblems([]readmeFence{
		{1, "sh {test}"}, {2, `sh {skip="needs a container engine"}`}, {3, "yaml {file=a.yaml}"}, {4, "text"},
		{5, "sh"}, {6, "bash"}, {7, ""}, {8, `sh {skip=""}`}, {9, "console"}, {10, "sh {tested}"},
	})
	var lines []string
	for _, p := range got {
		lines = append(lines, strings.SplitN(p, ":", 2)[0])
	}
	require.Equal(t, []string{"line 5", "line 6", "line 7", "line 8", "line 9", "line 10"}, lines, got)
}

// checkReadmeTrace requires what the README's Tracing section promises of the run its
// block submitted: one trace from the request to the finish, from a service named sluice.
func checkReadmeTrace(t *testing.T, spans []otlptest.Span) {
	t.Helper()
	want := []string{"POST /v1/runs", "submit", "claim", "run.attempt", "finish"}
	traces := map[string]map[string]otlptest.Span{}
	for _, s := range spans {
		if traces[s.TraceID] == nil {
			traces[s.TraceID] = map[string]otlptest.Span{}
		}
		traces[s.TraceID][s.Name] = s
	}
	for _, trace := range traces {
		if _, ok := trace["submit"]; !ok {
			continue
		}
		for _, name := range want {
			s, ok := trace[name]
			require.True(t, ok, "the run's trace has a %q span; it has %v", name, spanNames(trace))
			require.Equal(t, "sluice", s.Resource["service.name"], "%s: service.name", name)
		}
		runID := trace["submit"].Attrs["run_id"]
		require.NotEmpty(t, runID)
		for _, name := range []string{"claim", "run.attempt"} {
			require.Equal(t, runID, trace[name].Attrs["run_id"], "%s is of the submitted run", name)
		}
		require.Equal(t, "completed", trace["finish"].Attrs["status"])
		return
	}
	require.Fail(t, "the collector received no trace with a submit span", "%d spans", len(spans))
}

func spanNames(trace map[string]otlptest.Span) []string {
	names := make([]string, 0, len(trace))
	for n := range trace {
		names = append(names, n)
	}
	return names
}

// The tour that runs covers what SPEC §14.7 says a new user walks through; a block
// dropped or marked skip would otherwise take its feature out of the test unseen.
func TestReadmeTourRunsEveryFeature(t *testing.T) {
	t.Parallel()
	blocks, _ := readmeBlocks(t, filepath.Join("..", "..", "README.md"))
	var tour strings.Builder
	for _, block := range blocks {
		for _, c := range block {
			tour.WriteString(c.command + "\n")
		}
	}
	for feature, command := range map[string]string{
		"a foreground run":          "sluice run orders.yaml",
		"validation":                "sluice validate bad.yaml",
		"serve and submit":          "sluice runs submit orders.yaml --wait",
		"templates":                 "sluice templates register orders.tpl.yaml",
		"a template run":            "sluice templates run orders",
		"fan-out":                   "sluice templates fanout orders",
		"schedules":                 "sluice schedule create orders",
		"a backfill":                "sluice backfill orders-window",
		"${backfill.*} in validate": "sluice validate orders-window.tpl.yaml",
		"change requests":           "sluice change-requests approve",
		"the vault":                 "--vault-key",
		"MCP":                       "sluice mcp",
		"sluice init":               "sluice init",
		"contexts":                  "sluice context add",
		"a cluster":                 "sluice serve --cluster",
		"tracing":                   "--otlp-endpoint",
		"the set-up command":        "go run . serve",
	} {
		require.Contains(t, tour.String(), command, "the tested README blocks run %s", feature)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "examples", "orders-window.tpl.yaml"))
	require.NoError(t, err)
	require.Contains(t, string(raw), "${backfill.start}")
	require.Contains(t, string(raw), "${backfill.end}")
}
