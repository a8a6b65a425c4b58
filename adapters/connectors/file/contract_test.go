package file_test

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/file"
	"github.com/sluicehq/sluice/tests/contract/connector"
)

func leftovers(dir string) func(t *testing.T) []string {
	return func(t *testing.T) []string {
		m, err := filepath.Glob(filepath.Join(dir, ".*.sluice-tmp-*"))
		require.NoError(t, err)
		return m
	}
}

func readFile(t *testing.T, path string) ([]byte, bool) {
	t.Helper()
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false
	}
	require.NoError(t, err)
	return data, true
}

// jsonSourceValue is what the JSONL source reads back from encoding/json output: whole
// floats were written as integers, times as text.
func jsonSourceValue(v any) any {
	if f, ok := v.(float64); ok && f == math.Trunc(f) {
		return int64(f)
	}
	return connector.JSONValue(v)
}

func TestContractCSV(t *testing.T) {
	t.Parallel()
	c := file.New()
	connector.Run(t, connector.Harness{
		Name: "file csv",
		Spec: c.Spec(),
		NewSource: func(t *testing.T, data connector.Dataset) connector.SourceCase {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "in.csv"), connector.WriteCSV(t, data), 0o644))
			return connector.SourceCase{Source: c, Config: map[string]any{"path": "in.csv"}, BaseDir: dir,
				Want: connector.Map(data, connector.Text)}
		},
		BrokenSource: func(t *testing.T) connector.BrokenCase {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.csv"), []byte("a,b\n1,2\n3\n"), 0o644))
			return connector.BrokenCase{Source: c, Config: map[string]any{"path": "bad.csv"}, BaseDir: dir, Want: "bad.csv line 3"}
		},
		NewSink: func(t *testing.T) connector.SinkCase {
			dir := t.TempDir()
			out := filepath.Join(dir, "out.csv")
			return connector.SinkCase{
				Sink: c, Config: map[string]any{"path": "out.csv"}, BaseDir: dir,
				ReadBack: func(t *testing.T, cols []string) ([][]any, bool) {
					data, ok := readFile(t, out)
					return connector.ParseCSV(t, data, cols), ok
				},
				Normalize: connector.Text,
				Leftovers: leftovers(dir),
			}
		},
		Caps: connector.Capabilities{Incremental: true, Reaches: connector.Reaches{Paths: true}},
	})
}

func TestContractJSONL(t *testing.T) {
	t.Parallel()
	c := file.New()
	connector.Run(t, connector.Harness{
		Name: "file jsonl",
		Spec: c.Spec(),
		NewSource: func(t *testing.T, data connector.Dataset) connector.SourceCase {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "in.jsonl"), connector.WriteJSONL(t, data), 0o644))
			return connector.SourceCase{Source: c, Config: map[string]any{"path": "in.jsonl"}, BaseDir: dir,
				Want: connector.Map(data, jsonSourceValue)}
		},
		BrokenSource: func(t *testing.T) connector.BrokenCase {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.jsonl"), []byte("{\"a\":1}\n{\"a\":\n"), 0o644))
			return connector.BrokenCase{Source: c, Config: map[string]any{"path": "bad.jsonl"}, BaseDir: dir, Want: "bad.jsonl line 2"}
		},
		NewSink: func(t *testing.T) connector.SinkCase {
			dir := t.TempDir()
			out := filepath.Join(dir, "out.jsonl")
			return connector.SinkCase{
				Sink: c, Config: map[string]any{"path": "out.jsonl"}, BaseDir: dir,
				ReadBack: func(t *testing.T, cols []string) ([][]any, bool) {
					data, ok := readFile(t, out)
					return connector.ParseJSONL(t, data, cols), ok
				},
				Normalize: connector.JSONValue,
				Leftovers: leftovers(dir),
			}
		},
		Caps: connector.Capabilities{Incremental: true, Reaches: connector.Reaches{Paths: true}},
	})
}
