package file_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/file"
	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/application/execute"
)

// A full read of JSONL offers JSON-line pages: each object as written (without the
// spaces around it), blank lines skipped, globs read in order, pages of batch lines.
// What cannot stand as a line as written (invalid UTF-8 here) is decoded and encoded
// again, as the decoded read would write it.
func TestJSONLPassesThroughAsLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "a.jsonl", `{"b":1,"a":2}`+"\n\n"+`  {"c":3, "a" : [1,{"x":null}]}  `+"\r\n"+`{"b":"\u00e9"}`)
	write(t, dir, "b.jsonl", "{\"s\":\"\xff\"}\n{}\n")
	pages, err := conntest.ReadLines(t, file.New(), execute.ReadRequest{Config: map[string]any{"path": "*.jsonl"}, BaseDir: dir, BatchSize: 2})
	require.NoError(t, err)
	require.Len(t, pages, 3)
	require.Equal(t, []string{
		`{"b":1,"a":2}`,
		`{"c":3, "a" : [1,{"x":null}]}`,
		`{"b":"\u00e9"}`,
		"{\"s\":\"\uFFFD\"}",
		`{}`,
	}, conntest.Lines(pages))

	// Incremental reads and other formats keep decoded rows.
	require.False(t, conntest.Offers(t, file.New(), execute.ReadRequest{Config: map[string]any{"path": "*.jsonl"}, BaseDir: dir,
		Incremental: &execute.Incremental{Cursor: "b"}}))
	write(t, dir, "c.csv", "a\n1\n")
	require.False(t, conntest.Offers(t, file.New(), execute.ReadRequest{Config: map[string]any{"path": "c.csv"}, BaseDir: dir}))
}

// A line that is not a JSON object fails the JSON-line read with the decoded read's
// words, naming the file and line.
func TestJSONLinesFailAsTheDecodedReadFails(t *testing.T) {
	t.Parallel()
	for _, bad := range []string{`[1,2]`, `{"a":1} x`, `{"a":01}`, `{"a":"x`, `{a:1}`, `{"a":{"b":}}`, "{\"a\":\"\x01\"}"} {
		dir := t.TempDir()
		write(t, dir, "x.jsonl", "{\"ok\":1}\n"+bad+"\n")
		req := execute.ReadRequest{Config: map[string]any{"path": "x.jsonl"}, BaseDir: dir}
		_, decoded := readPages(t, file.New(), req)
		require.Error(t, decoded, bad)
		_, lines := conntest.ReadLines(t, file.New(), req)
		require.Error(t, lines, bad)
		require.Equal(t, decoded.Error(), lines.Error(), bad)
		require.Contains(t, lines.Error(), "x.jsonl line 2", bad)
	}
}

// A JSONL sink accepts JSON-line pages and writes their lines as they are; other formats
// decline them, and a page encoded without the sink's consent is refused.
func TestJSONLSinkWritesLinesAsTheyAre(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	ctx := context.Background()
	open := func(path string) execute.Sink {
		s, err := file.New().OpenSink(ctx, execute.WriteRequest{Config: map[string]any{"path": path}, BaseDir: dir})
		require.NoError(t, err)
		return s
	}
	lines := execute.Encoding{Format: "json-lines"}

	s := open("out.jsonl")
	require.True(t, s.(execute.PassthroughSink).AcceptEncoding(ctx, lines))
	require.NoError(t, s.Write(ctx, conntest.LinePage(`{"b":1,"a":2}`, `{"c":[1]}`)))
	require.NoError(t, s.Write(ctx, conntest.LinePage(`{}`)))
	require.NoError(t, s.Commit(ctx))
	require.Equal(t, "{\"b\":1,\"a\":2}\n{\"c\":[1]}\n{}\n", content(t, filepath.Join(dir, "out.jsonl")))

	for _, other := range []string{"out.csv", "out.parquet"} {
		s := open(other)
		require.False(t, s.(execute.PassthroughSink).AcceptEncoding(ctx, lines), other)
		require.NoError(t, s.Abort(ctx))
	}
	s = open("unasked.jsonl")
	require.False(t, s.(execute.PassthroughSink).AcceptEncoding(ctx, execute.Encoding{Format: "copy-text"}))
	require.ErrorContains(t, s.Write(ctx, conntest.LinePage(`{}`)), `page encoded as "json-lines", which this sink did not accept`)
	require.NoError(t, s.Abort(ctx))
	require.NoFileExists(t, filepath.Join(dir, "unasked.jsonl"))
}
