package jsonenc_test

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/jsonenc"
)

// stdlib encodes like encoding/json without HTML escaping.
func stdlib(t *testing.T, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	require.NoError(t, enc.Encode(v))
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	inputs := []string{
		"", "plain", `quote " backslash \ slash /`, "\n\r\t\b\f", "\x00\x01\x1f\x7f",
		"<html> & </html>", "é ✓ 😀", "bad \xff\xfe utf8", "\u2028 and \u2029", "\xed\xa0\x80",
		"mixed\x00é\"\xff",
	}
	for b := range 256 {
		inputs = append(inputs, string([]byte{byte(b)}), "a"+string([]byte{byte(b)})+"z")
	}
	for _, s := range inputs {
		require.Equal(t, stdlib(t, s), string(jsonenc.AppendString(nil, s)), "%q", s)
	}
}

func TestAppendFloat(t *testing.T) {
	t.Parallel()
	for _, f := range []float64{0.5, -1.25, 1e-7, 1.5e-7, 123456.789, 1e21, 1.7976931348623157e308, 5e-324, 0.000001, 123.000001} {
		got, err := jsonenc.AppendFloat(nil, f, 64)
		require.NoError(t, err)
		require.Equal(t, stdlib(t, f), string(got), "%v", f)
	}
	whole := map[float64]string{3: "3.0", 0: "0.0", -2: "-2.0", 1e20: "100000000000000000000.0", math.Copysign(0, -1): "-0.0"}
	for f, want := range whole {
		got, err := jsonenc.AppendFloat(nil, f, 64)
		require.NoError(t, err)
		require.Equal(t, want, string(got), "whole floats keep a fraction so they decode as floats")
		var back any
		dec := json.NewDecoder(bytes.NewReader(got))
		dec.UseNumber()
		require.NoError(t, dec.Decode(&back))
		_, err = back.(json.Number).Int64()
		require.Error(t, err)
	}
	got, err := jsonenc.AppendFloat(nil, float64(float32(0.1)), 32)
	require.NoError(t, err)
	require.Equal(t, "0.1", string(got))
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := jsonenc.AppendFloat(nil, bad, 64)
		require.ErrorIs(t, err, jsonenc.ErrUnsupported)
	}
	require.Equal(t, "3", string(jsonenc.AppendPlainFloat(nil, 3, 64)))
	require.Equal(t, "1e-7", string(jsonenc.AppendPlainFloat(nil, 1e-7, 64)))
}

func TestAppendValue(t *testing.T) {
	t.Parallel()
	at := time.Date(2025, 1, 2, 3, 4, 5, 600, time.FixedZone("", -7200))
	cases := []struct {
		v    any
		want string
	}{
		{nil, "null"},
		{"s", `"s"`},
		{int64(-5), "-5"},
		{int(7), "7"},
		{int32(8), "8"},
		{uint64(math.MaxUint64), "18446744073709551615"},
		{true, "true"},
		{2.5, "2.5"},
		{float32(1.5), "1.5"},
		{at, `"2025-01-02T03:04:05.0000006-02:00"`},
		{[]byte("hi"), `"aGk="`},
		{[]byte(nil), `""`},
		{json.Number("12.50"), "12.50"},
		{map[string]any{"b": int64(1), "a": []any{nil, "x", 1.0}}, `{"a":[null,"x",1.0],"b":1}`},
		{[]string{"a", "b"}, `["a","b"]`},
		{struct {
			A int `json:"a"`
		}{1}, `{"a":1}`},
	}
	for _, tc := range cases {
		got, err := jsonenc.AppendValue(nil, tc.v)
		require.NoError(t, err, "%#v", tc.v)
		require.Equal(t, tc.want, string(got), "%#v", tc.v)
	}
	for _, bad := range []any{make(chan int), json.Number("1x"), map[string]any{"x": math.NaN()}, []any{math.Inf(1)}} {
		_, err := jsonenc.AppendValue(nil, bad)
		require.ErrorIs(t, err, jsonenc.ErrUnsupported, "%#v", bad)
	}
}

func TestRowEncoder(t *testing.T) {
	t.Parallel()
	enc := jsonenc.NewRowEncoder([]string{"b", "a\"q"})
	require.Equal(t, []string{"b", "a\"q"}, enc.Columns())
	got, err := enc.AppendRow([]byte("prefix "), []any{int64(1), nil})
	require.NoError(t, err)
	require.Equal(t, "prefix {\"b\":1,\"a\\\"q\":null}\n", string(got))
	_, err = enc.AppendRow(nil, []any{int64(1)})
	require.ErrorContains(t, err, "row has 1 values for 2 columns")
	_, err = enc.AppendRow(nil, []any{int64(1), math.NaN()})
	require.ErrorContains(t, err, `column "a\"q"`)
	empty, err := jsonenc.NewRowEncoder(nil).AppendRow(nil, []any{})
	require.NoError(t, err)
	require.Equal(t, "{}\n", string(empty))
}
