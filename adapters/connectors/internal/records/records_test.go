package records

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The fast path decodes exactly as encoding/json (with the number typing) does, and
// leaves what it cannot parse to it.
func TestFastPathAgreesWithEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		`{}`, ` { } `, `{"a":1}`, `{"a":-0.5,"b":1e3,"c":12345678901234567890,"d":-9}`,
		`{"s":"plain","e":"tab\there \"q\" \u00e9","u":"✓ é","empty":""}`,
		`{"t":true,"f":false,"n":null}`,
		`{"o":{"x":[1,2.5,{"y":"}"}]},"l":[],"after":"]"}`,
		`{"dup":1,"dup":2}`, "{\"bad\":\"\xff\"}", `{"z":0}`,
	} {
		fast, ok := parseObject([]byte(in))
		require.True(t, ok, in)
		slow, err := decodeSlow([]byte(in))
		require.NoError(t, err, in)
		require.Equal(t, slow, any(fast), in)
	}
	for _, in := range []string{
		``, `[]`, `{`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{"a":01}`, `{"a":1.}`, `{"a":-}`, `{"a":tru}`,
		`{"a":1} x`, `{"a":"unterminated}`, `{"a":[1,2}`, `{"a":"ctl` + "\x01" + `"}`,
	} {
		_, ok := parseObject([]byte(in))
		require.False(t, ok, in)
		_, err := DecodeObject([]byte(in))
		require.Error(t, err, in)
	}
}

func TestBuilderUnionsColumns(t *testing.T) {
	t.Parallel()
	var b Builder
	b.Add(Object{"b": int64(1), "a": "x"})
	b.Add(Object{"c": true, "a": "y"})
	p := b.Page()
	require.Equal(t, []string{"a", "b", "c"}, p.Columns)
	require.Equal(t, [][]any{{"x", int64(1), nil}, {"y", nil, true}}, p.Rows)
	require.Positive(t, p.Bytes)
	require.Nil(t, b.Page(), "the builder is reset")
}

func TestDecodeObjectNamesTheKind(t *testing.T) {
	t.Parallel()
	_, err := DecodeObject([]byte(`[1]`))
	require.EqualError(t, err, "is a JSON array, not an object")
}

func BenchmarkDecodeObject(b *testing.B) {
	in := []byte(`{"id":123456,"name":"name-123456","amount":456.25,"active":true,"created_at":"2025-01-01T00:00:00Z"}`)
	for b.Loop() {
		if _, err := DecodeObject(in); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecodeSlow(b *testing.B) {
	in := []byte(`{"id":123456,"name":"name-123456","amount":456.25,"active":true,"created_at":"2025-01-01T00:00:00Z"}`)
	for b.Loop() {
		if _, err := decodeSlow(in); err != nil {
			b.Fatal(err)
		}
	}
}

func TestAddJSONDecodesIntoThePage(t *testing.T) {
	t.Parallel()
	var b Builder
	require.NoError(t, b.AddJSON([]byte(`{"z":1,"a":"x"}`)))
	require.Error(t, b.AddJSON([]byte(`{"new":1,"z":`)), "malformed: no row, no column")
	require.EqualError(t, b.AddJSON([]byte(`"text"`)), "is a JSON string, not an object")
	require.NoError(t, b.AddJSON([]byte(`{"a":"y","m":{"k":[1,2.5]}}`)))
	p := b.Page()
	require.Equal(t, []string{"z", "a", "m"}, p.Columns, "columns in the order keys first come")
	require.Equal(t, [][]any{{int64(1), "x", nil}, {nil, "y", map[string]any{"k": []any{int64(1), 2.5}}}}, p.Rows)
}

func BenchmarkAddJSON(b *testing.B) {
	in := []byte(`{"id":123456,"name":"name-123456","amount":456.25,"active":true,"created_at":"2025-01-01T00:00:00Z"}`)
	var bl Builder
	for b.Loop() {
		if err := bl.AddJSON(in); err != nil {
			b.Fatal(err)
		}
		if bl.Len() == 1000 {
			bl.Page()
		}
	}
}
