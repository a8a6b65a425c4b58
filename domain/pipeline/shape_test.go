package pipeline_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/pipeline"
)

func TestCheckShapeRefusesDeepAndHugeText(t *testing.T) {
	t.Parallel()
	blockLists := "k:\n" + func() string {
		var b strings.Builder
		for i := range 100 {
			b.WriteString(strings.Repeat("  ", i+1) + "-\n")
		}
		return b.String()
	}()
	for name, text := range map[string]string{
		"flow lists, depth 9000":      "x: " + strings.Repeat("[", 9000) + strings.Repeat("]", 9000),
		"JSON objects":                strings.Repeat(`{"a":`, 200) + "1" + strings.Repeat("}", 200),
		"inline sequence markers":     "x:\n" + strings.Repeat("- ", 70) + "1\n",
		"block lists":                 blockLists,
		"flow lists across lines":     strings.Repeat("[\n", 80) + strings.Repeat("]\n", 80),
		"100,001 values in one list":  "x: [" + strings.Repeat("1,", 100_001) + "1]",
		"100,001 lines of a sequence": "x:\n" + strings.Repeat("- 1\n", 100_001),
	} {
		err := pipeline.CheckShape([]byte(text))
		var errs pipeline.Errors
		require.ErrorAs(t, err, &errs, name)
		require.Regexp(t, `nests deeper than 64 levels|holds more than 100000 values`, err.Error(), name)
	}
}

func TestCheckShapeAcceptsOrdinaryConfigs(t *testing.T) {
	t.Parallel()
	for name, text := range map[string]string{
		"block and flow": `version: 1
name: orders # a comment with [ and {
pipeline:
  source: { type: generate, config: { count: 10, batch_size: 10 } }
  sink:
    type: sqlite
    config: { connection_url: "sqlite:/tmp/x[1.db", table_name: rows, key: [id, "a]b"] }
`,
		"plain scalar with brackets": "pattern: a[0\nother: b{\nlast: [1, 2]\n",
		"block scalar indented deep": "query: |\n" + strings.Repeat("        SELECT [\n", 10) + "name: x\n",
		"64 levels":                  strings.Repeat("[", 64) + strings.Repeat("]", 64),
		"JSON":                       `{"version": 1, "name": "x", "pipeline": {"source": {"type": "generate", "config": {"count": 1}}}}`,
		"single quotes":              "a: 'it''s [ fine'\nb: [1]\n",
	} {
		require.NoError(t, pipeline.CheckShape([]byte(text)), name)
	}
}
