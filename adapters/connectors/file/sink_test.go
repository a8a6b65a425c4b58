package file_test

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/file"
	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

func sinkRun(t *testing.T, dir string, cfg map[string]any, pages ...*execute.Page) error {
	t.Helper()
	return conntest.SinkRun(t, file.New(), execute.WriteRequest{Config: cfg, BaseDir: dir}, pages...)
}

func content(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

func page(cols []string, rows ...[]any) *execute.Page {
	return conntest.Page(cols, rows...)
}

func TestSinkWritesThroughATempFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := file.New().OpenSink(context.Background(), execute.WriteRequest{Config: map[string]any{"path": "o.csv"}, BaseDir: dir})
	require.NoError(t, err)
	require.Equal(t, execute.AtEnd, s.Durability())
	require.NoError(t, s.Write(context.Background(), page([]string{"a"}, []any{"1"})))
	tmp, _ := filepath.Glob(filepath.Join(dir, ".o.csv.sluice-tmp-*"))
	require.Len(t, tmp, 1, "pages go to a hidden temp file next to the target")
	require.NoFileExists(t, filepath.Join(dir, "o.csv"), "nothing looks complete before Commit")
	require.NoError(t, s.Commit(context.Background()))
	require.Equal(t, "a\n1\n", content(t, filepath.Join(dir, "o.csv")))
	tmp, _ = filepath.Glob(filepath.Join(dir, ".o.csv.sluice-tmp-*"))
	require.Empty(t, tmp)
	st, err := os.Stat(filepath.Join(dir, "o.csv"))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o644), st.Mode().Perm())
	require.Error(t, s.Commit(context.Background()), "a second Commit is refused")
}

func TestSinkAppendAndOverwrite(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "o.csv")
	require.NoError(t, os.WriteFile(out, []byte("b,a\nx,y"), 0o600)) // no final newline
	require.NoError(t, sinkRun(t, dir, map[string]any{"path": "o.csv"},
		page([]string{"a", "b"}, []any{"1", "2"}), page([]string{"b"}, []any{"3"})))
	require.Equal(t, "b,a\nx,y\n2,1\n3,\n", content(t, out), "appended pages map onto the existing header")
	st, _ := os.Stat(out)
	require.Equal(t, os.FileMode(0o600), st.Mode().Perm(), "the file keeps its mode")

	err := sinkRun(t, dir, map[string]any{"path": "o.csv"}, page([]string{"a", "c"}, []any{"1", "2"}))
	require.ErrorContains(t, err, `column "c" is not in the CSV header [b a]`)
	require.Equal(t, "b,a\nx,y\n2,1\n3,\n", content(t, out), "a failed append leaves the file as it was")

	require.NoError(t, sinkRun(t, dir, map[string]any{"path": "o.csv", "write_mode": "overwrite"},
		page([]string{"c"}, []any{"new"})))
	require.Equal(t, "c\nnew\n", content(t, out))
}

func TestSinkCSVNewColumnOnLaterPage(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	err := sinkRun(t, dir, map[string]any{"path": "o.csv"},
		page([]string{"a"}, []any{"1"}), page([]string{"a", "extra"}, []any{"2", "3"}))
	require.ErrorContains(t, err, `column "extra" is not in the CSV header`)
	require.NoFileExists(t, filepath.Join(dir, "o.csv"))
}

func TestSinkCSVOptionsAndValues(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	at := time.Date(2025, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	require.NoError(t, sinkRun(t, dir, map[string]any{"path": "o.tsv", "format": "csv", "delimiter": "\t", "header": false},
		page([]string{"s", "i", "f", "b", "t", "bytes", "n", "m"},
			[]any{"a\tb", int64(-3), 1e21, true, at, []byte("hi"), nil, map[string]any{"k": 1.5}})))
	require.Equal(t, "\"a\tb\"\t-3\t1e+21\ttrue\t2025-01-02T03:04:05+01:00\taGk=\t\t\"{\"\"k\"\":1.5}\"\n", content(t, filepath.Join(dir, "o.tsv")))
}

func TestSinkJSONLEncoding(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, sinkRun(t, dir, map[string]any{"path": "o.jsonl"},
		page([]string{"s", "ctl", "bad", "sep", "f", "tiny", "neg", "i"},
			[]any{"<tag> & \"q\" \\", "\x00\x1f\t\b\f", "a\xffb", "\u2028\u2029", 3.0, 1e-7, -0.5, int64(math.MinInt64)})))
	require.Equal(t,
		`{"s":"<tag> & \"q\" \\","ctl":"\u0000\u001f\t\b\f","bad":"a\ufffdb","sep":"\u2028\u2029","f":3.0,"tiny":1e-7,"neg":-0.5,"i":-9223372036854775808}`+"\n",
		content(t, filepath.Join(dir, "o.jsonl")))

	err := sinkRun(t, dir, map[string]any{"path": "n.jsonl"}, page([]string{"x"}, []any{math.NaN()}))
	require.ErrorContains(t, err, `column "x"`)
	require.NoFileExists(t, filepath.Join(dir, "n.jsonl"))
}

func TestSinkJSONLAppend(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, sinkRun(t, dir, map[string]any{"path": "o.jsonl"}, page([]string{"a"}, []any{int64(1)})))
	require.NoError(t, sinkRun(t, dir, map[string]any{"path": "o.jsonl"}, page([]string{"b"}, []any{int64(2)})))
	require.Equal(t, "{\"a\":1}\n{\"b\":2}\n", content(t, filepath.Join(dir, "o.jsonl")))
}

func TestSinkRefusals(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(dir, "d.csv"), 0o755))
	cases := []struct {
		name string
		cfg  map[string]any
		want string
	}{
		{"upsert", map[string]any{"path": "o.csv", "write_mode": "upsert"}, "write_mode upsert needs rows addressable by key"},
		{"delete", map[string]any{"path": "o.csv", "write_mode": "delete"}, "write_mode delete needs rows addressable by key"},
		{"unknown mode", map[string]any{"path": "o.csv", "write_mode": "merge"}, `unknown write_mode "merge"`},
		{"url", map[string]any{"path": "https://example.com/o.csv"}, "local files only"},
		{"glob", map[string]any{"path": "*.csv"}, "cannot be a glob"},
		{"no extension", map[string]any{"path": "out"}, "set format: csv, jsonl or parquet"},
		{"missing dir", map[string]any{"path": "nodir/o.csv"}, "create temp file for " + filepath.Join(dir, "nodir", "o.csv")},
		{"directory", map[string]any{"path": "d.csv"}, "is not a regular file"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := file.New().OpenSink(context.Background(), execute.WriteRequest{Config: tc.cfg, BaseDir: dir})
			require.ErrorContains(t, err, tc.want)
			require.ErrorContains(t, err, "file: ")
		})
	}
}

func TestSpecCheck(t *testing.T) {
	t.Parallel()
	spec := file.New().Spec()
	require.Equal(t, pipeline.RoleBoth, spec.Roles)
	const p = "pipeline.sink.config"
	require.Empty(t, spec.Check(pipeline.RoleSink, map[string]any{"path": "o.csv", "write_mode": "overwrite"}, p))
	require.Empty(t, spec.Check(pipeline.RoleSource, map[string]any{"path": "https://h/x.jsonl?sig=1"}, p))
	require.Empty(t, spec.Check(pipeline.RoleSource, map[string]any{"path": "data/*.csv"}, p))

	errs := spec.Check(pipeline.RoleSink, map[string]any{"path": "*.txt", "write_mode": "upsert", "delimiter": ""}, p)
	paths := map[string]string{}
	for _, e := range errs {
		paths[e.Path] = e.Message
	}
	require.Contains(t, paths[p+".write_mode"], "use append or overwrite")
	require.Contains(t, paths[p+".path"], "cannot be a glob")
	require.Contains(t, paths[p+".format"], "set format: csv, jsonl or parquet")
	require.Contains(t, paths[p+".delimiter"], "one character")
	// write_mode is a sink key; Check ignores it for sources.
	require.Empty(t, spec.Check(pipeline.RoleSource, map[string]any{"path": "a.csv", "write_mode": "upsert"}, p))
}
