package file_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/file"
	"github.com/sluicehq/sluice/application/execute"
)

func TestJSONLColumnsAreTheUnionInFirstSeenOrder(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "u.jsonl", `{"b":1,"a":2}`+"\n\n"+`  {"c":3,"a":4}`+"\r\n"+`{"b":5}`)
	pages, err := readPages(t, file.New(), execute.ReadRequest{Config: map[string]any{"path": "u.jsonl"}, BaseDir: dir})
	require.NoError(t, err)
	require.Len(t, pages, 1)
	require.Equal(t, []string{"b", "a", "c"}, pages[0].Columns)
	require.Equal(t, [][]any{
		{int64(1), int64(2), nil},
		{nil, int64(4), int64(3)},
		{int64(5), nil, nil},
	}, pages[0].Rows)
}

func TestJSONLValues(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	line := `{"i":-12,"big":12345678901234567890,"f":1.5,"whole":2.0,"e":1e3,"s":"x\"\u00e9\n","u":"é✓",` +
		`"t":true,"n":null,"o":{"k":[1,2.5,"z"]},"a":[],"dup":1,"dup":2}`
	write(t, dir, "v.jsonl", line+"\n")
	pages, err := readPages(t, file.New(), execute.ReadRequest{Config: map[string]any{"path": "v.jsonl"}, BaseDir: dir})
	require.NoError(t, err)
	require.Equal(t, []string{"i", "big", "f", "whole", "e", "s", "u", "t", "n", "o", "a", "dup"}, pages[0].Columns)
	require.Equal(t, []any{
		int64(-12), 12345678901234567890.0, 1.5, 2.0, 1000.0, "x\"é\n", "é✓", true, nil,
		map[string]any{"k": []any{int64(1), 2.5, "z"}}, []any{}, int64(2),
	}, pages[0].Rows[0])
}

func TestJSONLInvalidLinesNameTheLine(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`[1,2]`:             "expected a JSON object",
		`{"a":1} x`:         "unexpected 'x' after the object",
		`{"a":01}`:          "invalid number",
		`{"a":-}`:           "invalid number",
		`{"a":1.}`:          "invalid number",
		`{"a":tru}`:         "unexpected 't'",
		`{"a":"x`:           "unterminated string",
		`{a:1}`:             "expected a quoted key",
		`{"a" 1}`:           "expected ':'",
		`{"a":1,}`:          "expected a quoted key",
		`{"a":{"b":}}`:      "invalid JSON",
		`{"a":"\q"}`:        "invalid string",
		"{\"a\":\"\x01\"}":  "control character",
		`{"a":1e999}`:       "out of range",
		`{"a":[1,2}`:        "invalid JSON",
		`{"a":1 "b":2}`:     "expected ',' or '}'",
		`{"a":{"b":"}"`:     "unexpected end of line",
		`{"a":1}{"b":2}`:    "after the object",
		`{"a":NaN}`:         "unexpected 'N'",
		`{"a":"ok"`:         "unexpected end of line",
		`{"a":"\ud800"}x`:   "after the object",
		`{"a":1,"b":[1,]}`:  "invalid JSON",
		`{"a":1,"b":{"c"}}`: "invalid JSON",
	}
	for line, want := range cases {
		t.Run(line, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			write(t, dir, "bad.jsonl", "{\"ok\":1}\n"+line+"\n")
			_, err := readPages(t, file.New(), execute.ReadRequest{Config: map[string]any{"path": "bad.jsonl"}, BaseDir: dir})
			require.ErrorContains(t, err, "bad.jsonl line 2: ")
			require.ErrorContains(t, err, want)
		})
	}
}

func TestJSONLInvalidUTF8BecomesReplacementChar(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write(t, dir, "x.jsonl", "{\"a\":\"b\xffc\"}\n")
	pages, err := readPages(t, file.New(), execute.ReadRequest{Config: map[string]any{"path": "x.jsonl"}, BaseDir: dir})
	require.NoError(t, err)
	require.Equal(t, "b\uFFFDc", pages[0].Rows[0][0])
}

func TestJSONLLongLines(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	long := strings.Repeat("x", 3<<20) // longer than the read buffer
	write(t, dir, "l.jsonl", `{"a":"`+long+`"}`+"\n"+`{"a":"short"}`)
	pages, err := readPages(t, file.New(), execute.ReadRequest{Config: map[string]any{"path": "l.jsonl"}, BaseDir: dir})
	require.NoError(t, err)
	require.Equal(t, [][]any{{long}, {"short"}}, allRows(pages))
}
