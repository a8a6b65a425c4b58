package configtext_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/configtext"
	"github.com/sluicehq/sluice/domain/pipeline"
)

const yamlConfig = `# a comment
version: 1
name: orders-mirror
shard: { count: 8 }
pipeline:
  source: { type: postgres, config: { connection_url: "${env:PG_URL}", query: "SELECT * FROM orders" } }
  sink:
    type: postgres
    config:
      key: [id]
      create_table: true
      ratio: 0.5
      empty: ~
`

func TestDecodeYAML(t *testing.T) {
	t.Parallel()
	n, err := configtext.Decode([]byte(yamlConfig))
	require.NoError(t, err)
	require.Equal(t, pipeline.KindMap, n.Kind)
	require.Equal(t, []string{"version", "name", "shard", "pipeline"}, keysOf(n))
	require.Equal(t, map[string]any{
		"version": int64(1),
		"name":    "orders-mirror",
		"shard":   map[string]any{"count": int64(8)},
		"pipeline": map[string]any{
			"source": map[string]any{"type": "postgres", "config": map[string]any{
				"connection_url": "${env:PG_URL}", "query": "SELECT * FROM orders",
			}},
			"sink": map[string]any{"type": "postgres", "config": map[string]any{
				"key": []any{"id"}, "create_table": true, "ratio": 0.5, "empty": nil,
			}},
		},
	}, n.Any())

	name := n.Get("name")
	require.Equal(t, pipeline.Pos{Line: 3, Column: 7}, name.Pos)
	require.Equal(t, pipeline.Pos{Line: 3, Column: 1}, n.Fields[1].KeyPos)
	require.Equal(t, pipeline.TypeInt, n.Get("version").Type)
	require.Equal(t, pipeline.TypeString, name.Type)
	sinkCfg := n.Get("pipeline").Get("sink").Get("config")
	require.Equal(t, pipeline.TypeBool, sinkCfg.Get("create_table").Type)
	require.Equal(t, pipeline.TypeFloat, sinkCfg.Get("ratio").Type)
	require.Equal(t, pipeline.KindNull, sinkCfg.Get("empty").Kind)
	require.Equal(t, pipeline.KindList, sinkCfg.Get("key").Kind)
	require.Equal(t, pipeline.Pos{Line: 10, Column: 13}, sinkCfg.Get("key").Items[0].Pos)
}

func TestDecodeJSON(t *testing.T) {
	t.Parallel()
	text := `{"version": 1, "name": "j", "pipeline": {"source": {"type": "gen", "config": {"count": 10, "rate": 2.5, "on": false, "x": null}}}}`
	n, err := configtext.Decode([]byte(text))
	require.NoError(t, err)
	require.Equal(t, map[string]any{
		"version": int64(1), "name": "j",
		"pipeline": map[string]any{"source": map[string]any{"type": "gen", "config": map[string]any{
			"count": int64(10), "rate": 2.5, "on": false, "x": nil,
		}}},
	}, n.Any())
	// A quoted number in JSON stays a string.
	n, err = configtext.Decode([]byte(`{"v": "1"}`))
	require.NoError(t, err)
	require.Equal(t, pipeline.TypeString, n.Get("v").Type)
}

func TestDecodeTags(t *testing.T) {
	t.Parallel()
	text := "s: !!str 12\nh: 0x1F\no: 0o17\nf: 1.50\nt: True\nd: 2024-01-01\nq: '7'\nn: null\nu: 1_000\ne: 1e3\n"
	n, err := configtext.Decode([]byte(text))
	require.NoError(t, err)
	type tv struct {
		typ pipeline.ScalarType
		val string
	}
	want := map[string]tv{
		"s": {pipeline.TypeString, "12"},
		"h": {pipeline.TypeInt, "31"},
		"o": {pipeline.TypeInt, "15"},
		"f": {pipeline.TypeFloat, "1.5"},
		"t": {pipeline.TypeBool, "true"},
		"d": {pipeline.TypeString, "2024-01-01"},
		"q": {pipeline.TypeString, "7"},
		"u": {pipeline.TypeInt, "1000"},
		"e": {pipeline.TypeFloat, "1000"},
	}
	for k, w := range want {
		got := n.Get(k)
		require.Equal(t, pipeline.KindScalar, got.Kind, k)
		require.Equal(t, w, tv{got.Type, got.Value}, k)
	}
	require.Equal(t, pipeline.KindNull, n.Get("n").Kind)
}

func TestDecodeAliases(t *testing.T) {
	t.Parallel()
	n, err := configtext.Decode([]byte("base: &b {type: db}\nsource: *b\nsink: *b\n"))
	require.NoError(t, err)
	require.Equal(t, "db", n.Get("sink").Get("type").Value)
	// Each use is its own copy: resolving one cannot change the other.
	n.Get("sink").Get("type").Value = "x"
	require.Equal(t, "db", n.Get("source").Get("type").Value)
}

func TestDecodeMalformed(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text string
		pos  pipeline.Pos
		msg  string
	}{
		{"version: 1\nname: x\n pipeline: 2\n", pipeline.Pos{Line: 3}, "mapping values are not allowed"},
		{"version: 1\nname: x\nkey: [1, 2\nother: 4\n", pipeline.Pos{Line: 3}, "did not find expected ',' or ']'"},
		{"version: 1\nname: 'x\n", pipeline.Pos{Line: 2}, "found unexpected end of stream"},
		{"a: 1\nb: [1, 2]]\n", pipeline.Pos{Line: 2}, "did not find expected key"},
		{"a: b: c", pipeline.Pos{Line: 1}, "mapping values are not allowed"},
		{"a: 1\nb: *nope\n", pipeline.Pos{Line: 2, Column: 4}, "unknown anchor 'nope' referenced"},
		{"a: 1\nb: x\x01y\n", pipeline.Pos{Line: 2, Column: 5}, "control characters are not allowed"},
		{"a: 1\nb: \xff\n", pipeline.Pos{Line: 2, Column: 4}, "invalid leading UTF-8 octet"},
		{"{\"version\": 1,\n \"name\" \"x\"}", pipeline.Pos{Line: 2, Column: 9}, "invalid character '\"' after object key"},
		{"{\"version\": 1,\n \"name\": [1, 2", pipeline.Pos{Line: 2, Column: 15}, "unexpected end of JSON text"},
	}
	for _, tc := range cases {
		_, err := configtext.Decode([]byte(tc.text))
		var se *pipeline.SyntaxError
		require.True(t, errors.As(err, &se), "%q: %v", tc.text, err)
		require.Equal(t, tc.pos, se.Pos, tc.text)
		require.Contains(t, se.Message, tc.msg, tc.text)
		require.True(t, errors.Is(err, pipeline.ErrInvalidConfig))
		require.Contains(t, err.Error(), "line ")
	}
}

func TestDecodeRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		text string
		want string // FieldError.String() of the first error
	}{
		{"", "config is empty"},
		{"  \n# only a comment\n", "config is empty"},
		{"---\n", "config is empty"},
		{"~", "config is empty"},
		{"a: 1\n---\nb: 2\n", "the text holds more than one YAML document (---); a config is one document (line 2, column 1)"},
		{"- 1\n- 2\n", "a config must be a map with version, name and pipeline (line 1, column 1)"},
		{"just text", "a config must be a map"},
		{"name: a\nversion: 1\nname: b\n", "name: duplicate key (first defined at line 1) (line 3, column 1)"},
		{"p:\n  s: {type: x, type: y}\n", "p.s.type: duplicate key (first defined at line 2) (line 2, column 16)"},
		{"base: &b {x: 1}\nc:\n  <<: *b\n", "c.<<: merge keys (<<) are not supported: write the keys out (line 3, column 3)"},
		{"a: !custom x\n", "a: unsupported tag !custom"},
		{"a: !!binary aGVsbG8=\n", "a: unsupported tag !!binary"},
		{"a: .inf\n", "a: must be a finite number (line 1, column 4)"},
		{"a: .nan\n", "a: must be a finite number"},
		{"a: &x [1, *x]\n", "a[1]: alias *x refers to the value that contains it"},
		{"? [a, b]\n: 1\n", "a key must be a plain value, not a map or list"},
	}
	for _, tc := range cases {
		_, err := configtext.Decode([]byte(tc.text))
		var es pipeline.Errors
		require.True(t, errors.As(err, &es), "%q: %v", tc.text, err)
		require.NotEmpty(t, es)
		require.True(t, strings.HasPrefix(es[0].String(), tc.want), "%q: got %q", tc.text, es[0].String())
		require.True(t, errors.Is(err, pipeline.ErrInvalidConfig))
	}
}

func TestDecodeReportsEveryProblem(t *testing.T) {
	t.Parallel()
	_, err := configtext.Decode([]byte("a: 1\na: 2\nb: !x y\nb: 3\n"))
	var es pipeline.Errors
	require.True(t, errors.As(err, &es))
	require.Len(t, es, 3)
}

func TestDecodeAliasBomb(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 6; i++ {
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := 0; j < 10; j++ {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString("*a" + string(rune('0'+i-1)))
		}
		b.WriteString("]\n")
	}
	_, err := configtext.Decode([]byte(b.String()))
	require.ErrorContains(t, err, "more than 100000 nodes")
}

func TestDecoderType(t *testing.T) {
	t.Parallel()
	n, err := configtext.Decoder{}.Decode([]byte("a: 1"))
	require.NoError(t, err)
	require.Equal(t, "1", n.Get("a").Value)
}

func keysOf(n *pipeline.Node) []string {
	out := make([]string, 0, len(n.Fields))
	for _, f := range n.Fields {
		out = append(out, f.Key)
	}
	return out
}
