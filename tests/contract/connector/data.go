package connector

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var names = []string{"plain", "comma, inside", `quote "inside"`, "line\nbreak", "unicode ✓ é", ""}

// Data returns n rows of the suite's standard columns: id (int64 from 1), name (string,
// including commas, quotes, line breaks, non-ASCII and empty), amount (float64, every
// fourth one whole), active (bool), at (UTC time.Time with nanoseconds) and note (a
// string, nil on every third row).
func Data(n int) Dataset {
	d := Dataset{Columns: []string{"id", "name", "amount", "active", "at", "note"}}
	base := time.Date(2025, 3, 1, 8, 0, 0, 123456789, time.UTC)
	for i := 1; i <= n; i++ {
		var note any = "note " + strconv.Itoa(i)
		if i%3 == 0 {
			note = nil
		}
		d.Rows = append(d.Rows, []any{
			int64(i), names[(i-1)%len(names)], float64(i) * 1.25, i%2 == 0,
			base.Add(time.Duration(i) * time.Hour), note,
		})
	}
	return d
}

// Map returns d with f applied to every value.
func Map(d Dataset, f func(v any) any) Dataset {
	out := Dataset{Columns: append([]string(nil), d.Columns...)}
	for _, r := range d.Rows {
		nr := make([]any, len(r))
		for i, v := range r {
			nr[i] = f(v)
		}
		out.Rows = append(out.Rows, nr)
	}
	return out
}

// Text is how a value looks in a CSV file: nil is empty, times RFC 3339, floats
// shortest form.
func Text(v any) any {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case time.Time:
		return x.Format(time.RFC3339Nano)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	}
	return fmt.Sprint(v)
}

// JSONValue is how a value comes back from JSONL: times become RFC 3339 text.
func JSONValue(v any) any {
	if tm, ok := v.(time.Time); ok {
		return tm.Format(time.RFC3339Nano)
	}
	return v
}

// ParseJSONL decodes JSONL into rows in the order of columns (missing keys are nil);
// numbers written without fraction or exponent are int64, others float64.
func ParseJSONL(t *testing.T, data []byte, columns []string) [][]any {
	t.Helper()
	var rows [][]any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	for dec.More() {
		var obj map[string]any
		require.NoError(t, dec.Decode(&obj))
		row := make([]any, len(columns))
		for i, c := range columns {
			row[i] = fromNumber(obj[c])
		}
		rows = append(rows, row)
	}
	return rows
}

func fromNumber(v any) any {
	n, ok := v.(json.Number)
	if !ok {
		return v
	}
	if i, err := strconv.ParseInt(string(n), 10, 64); err == nil {
		return i
	}
	f, _ := n.Float64()
	return f
}

// ParseCSV decodes CSV with a header into rows in the order of columns (missing columns
// are "").
func ParseCSV(t *testing.T, data []byte, columns []string) [][]any {
	t.Helper()
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	require.NoError(t, err)
	if len(recs) == 0 {
		return nil
	}
	pos := map[string]int{}
	for i, h := range recs[0] {
		pos[h] = i
	}
	var rows [][]any
	for _, rec := range recs[1:] {
		row := make([]any, len(columns))
		for i, c := range columns {
			row[i] = ""
			if j, ok := pos[c]; ok {
				row[i] = rec[j]
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// WriteCSV encodes d as CSV with a header, values as Text.
func WriteCSV(t *testing.T, d Dataset) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	require.NoError(t, w.Write(d.Columns))
	for _, r := range d.Rows {
		rec := make([]string, len(r))
		for i, v := range r {
			rec[i] = Text(v).(string)
		}
		require.NoError(t, w.Write(rec))
	}
	w.Flush()
	require.NoError(t, w.Error())
	return buf.Bytes()
}

// WriteJSONL encodes d as JSONL with encoding/json (keys sorted, times RFC 3339).
func WriteJSONL(t *testing.T, d Dataset) []byte {
	t.Helper()
	var buf bytes.Buffer
	for _, r := range d.Rows {
		obj := map[string]any{}
		for i, c := range d.Columns {
			obj[c] = r[i]
		}
		b, err := json.Marshal(obj)
		require.NoError(t, err)
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes()
}
