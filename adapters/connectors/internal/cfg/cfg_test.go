package cfg_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/domain/pipeline"
)

func TestAccessors(t *testing.T) {
	t.Parallel()
	c := map[string]any{
		"s": "x", "i": 3, "i64": int64(4), "f": 5.0, "frac": 5.5, "num": json.Number("6"), "istr": "7",
		"b": true, "bstr": "false", "l": []any{"a", "b"}, "ls": []string{"c"}, "one": "d", "bad": []any{"a", 1},
	}
	s, err := cfg.String(c, "s", "def")
	require.NoError(t, err)
	require.Equal(t, "x", s)
	s, _ = cfg.String(c, "missing", "def")
	require.Equal(t, "def", s)
	_, err = cfg.String(c, "i", "")
	require.ErrorContains(t, err, `config key "i" must be a string`)

	for key, want := range map[string]int64{"i": 3, "i64": 4, "f": 5, "num": 6, "istr": 7, "missing": 9} {
		got, err := cfg.Int(c, key, 9)
		require.NoError(t, err, key)
		require.Equal(t, want, got, key)
	}
	_, err = cfg.Int(c, "frac", 0)
	require.ErrorContains(t, err, `config key "frac" must be an integer`)
	_, err = cfg.Int(c, "s", 0)
	require.Error(t, err)

	f, ok, err := cfg.Float(c, "frac")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, 5.5, f)
	_, ok, err = cfg.Float(c, "missing")
	require.NoError(t, err)
	require.False(t, ok)
	_, _, err = cfg.Float(c, "b")
	require.ErrorContains(t, err, `config key "b" must be a number`)
	_, _, err = cfg.Float(map[string]any{"n": "NaN"}, "n")
	require.Error(t, err)

	b, err := cfg.Bool(c, "b", false)
	require.NoError(t, err)
	require.True(t, b)
	b, err = cfg.Bool(c, "bstr", true)
	require.NoError(t, err)
	require.False(t, b)
	_, err = cfg.Bool(c, "i", false)
	require.ErrorContains(t, err, `config key "i" must be true or false`)

	l, err := cfg.Strings(c, "l")
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, l)
	l, _ = cfg.Strings(c, "ls")
	require.Equal(t, []string{"c"}, l)
	l, _ = cfg.Strings(c, "one")
	require.Equal(t, []string{"d"}, l)
	l, _ = cfg.Strings(c, "missing")
	require.Nil(t, l)
	_, err = cfg.Strings(c, "bad")
	require.ErrorContains(t, err, "item 1")
	_, err = cfg.Strings(c, "i")
	require.Error(t, err)
}

func TestBatchSize(t *testing.T) {
	t.Parallel()
	n, err := cfg.BatchSize(0, map[string]any{})
	require.NoError(t, err)
	require.Equal(t, cfg.BatchSizeDefault, n)
	n, _ = cfg.BatchSize(0, map[string]any{"batch_size": 50})
	require.Equal(t, 50, n)
	n, _ = cfg.BatchSize(7, map[string]any{"batch_size": 50})
	require.Equal(t, 7, n, "the request wins")
	for _, bad := range []any{0, -1, int64(1) << 40, "x"} {
		_, err := cfg.BatchSize(0, map[string]any{"batch_size": bad})
		require.ErrorContains(t, err, `"batch_size"`)
	}
}

func TestRedactURL(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"https://user:pw@host:8080/p/x.csv?token=abc#f": "https://REDACTED@host:8080/p/x.csv",
		"postgres://u:secret@db/app?sslmode=disable":    "postgres://REDACTED@db/app",
		"http://host/x.csv":                             "http://host/x.csv",
		"http://user@host/x":                            "http://REDACTED@host/x",
		"not a url with secret@host?x=1":                "REDACTED@host",
		"%zz://u:p@h/x?k=v":                             "REDACTED@h/x",
	}
	for in, want := range cases {
		require.Equal(t, want, cfg.RedactURL(in), in)
	}
}

func TestFields(t *testing.T) {
	t.Parallel()
	f := cfg.BatchSizeField()
	require.Equal(t, "batch_size", f.Name)
	require.Equal(t, pipeline.FieldInt, f.Type)
	require.Equal(t, "key", cfg.Field(pipeline.SinkWriteFields(), "key").Name)
	require.Panics(t, func() { cfg.Field(nil, "nope") })
	m, err := cfg.WriteModeOf(map[string]any{})
	require.NoError(t, err)
	require.Equal(t, pipeline.Append, m)
}
