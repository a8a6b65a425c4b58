package jsonlines

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// reencode is a slow path: it decodes with encoding/json and encodes compactly.
func reencode(dst, b []byte) ([]byte, error) {
	var o map[string]any
	if err := json.Unmarshal(b, &o); err != nil {
		return dst, err
	}
	if o == nil {
		return dst, errors.New("not an object")
	}
	out, err := json.Marshal(o)
	if err != nil {
		return dst, err
	}
	return append(append(dst, out...), '\n'), nil
}

func TestObjectsThatFitALinePassAsTheyAre(t *testing.T) {
	for _, in := range []string{
		`{}`,
		`{"a":1}`,
		` {"a" : -0.5e+3 , "b":[true,false,null,{"c":"\u00e9\n\"x\""}], "d":{}} `,
		`{"big":123456789012345678901234567890,"f":1.0,"s":"héllo ☃","e":"\/"}`,
		"{\"t\":\t[ ]}",
	} {
		got, err := Append(nil, []byte(in), func([]byte, []byte) ([]byte, error) {
			t.Fatalf("%s took the slow path", in)
			return nil, nil
		})
		require.NoError(t, err)
		require.Equal(t, strings.Trim(in, " ")+"\n", string(got))
	}
}

func TestEverythingElseTakesTheSlowPath(t *testing.T) {
	for _, in := range []string{
		"{\"a\":\n1}",                // a line break between tokens: valid, compacted
		"{\"a\":1}\r",                // a carriage return
		"{\"a\":\"\xff\"}",           // invalid UTF-8
		`{"a":1} {"b":2}`,            // two objects
		`[1,2]`, `"s"`, `12`, `null`, // not objects
		`{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":-}`, // numbers
		`{"a":"\x"}`, `{"a":"\u12g4"}`, "{\"a\":\"\x01\"}", `{"a":"x`, // strings
		`{"a":tru}`, `{"a":nul}`, `{"a" 1}`, `{"a":1,}`, `{,}`, `{"a":[1,]}`, `{a:1}`, `{`, `{"a":1`, // structure
		strings.Repeat(`{"a":`, maxDepth+1) + `1` + strings.Repeat(`}`, maxDepth+1), // too deep
	} {
		slow := false
		got, err := Append([]byte("x\n"), []byte(in), func(dst, b []byte) ([]byte, error) {
			slow = true
			return reencode(dst, b)
		})
		require.True(t, slow, "%q passed without the slow path", in)
		if json.Valid([]byte(in)) && strings.HasPrefix(strings.TrimSpace(in), "{") && len(in) < 1000 {
			require.NoError(t, err, "%q", in)
			require.True(t, bytes.HasPrefix(got, []byte("x\n")))
			require.Equal(t, 2, Count(got), "%q becomes one line", in)
		} else if err != nil {
			require.Equal(t, "x\n", string(got), "a failed object leaves dst as it was")
		}
	}
}

func TestLinesAndCount(t *testing.T) {
	var got []string
	Lines([]byte("{\"a\":1}\n{}\n"), func(l []byte) { got = append(got, string(l)) })
	require.Equal(t, []string{`{"a":1}`, `{}`}, got)
	require.Equal(t, 2, Count([]byte("{}\n{}\n")))
	require.Equal(t, 2, Count([]byte("{}\n{}")))
	require.Equal(t, 0, Count(nil))
}

// FuzzLine: whatever passes as it is must be one valid JSON object on one line.
func FuzzLine(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":[1,{"b":"c"}]}`, `{"a":"\u00e9"}`, `{"a":1e5}`, `[]`, `{`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		l, ok := line(b)
		if !ok {
			return
		}
		if !json.Valid(l) || !utf8.Valid(l) || bytes.ContainsAny(l, "\r\n") || l[0] != '{' {
			t.Fatalf("%q passed as a line", b)
		}
		var o map[string]any
		if err := json.Unmarshal(l, &o); err != nil || o == nil {
			t.Fatalf("%q passed but is not an object: %v", b, err)
		}
	})
}
