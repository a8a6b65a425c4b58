package cursor

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// Compare orders two cursor values: numerically when both are numbers or numeric text
// (so "9" < "10" in a CSV file), otherwise by their text form. Times compare by their
// RFC 3339 text in UTC, which orders like the instants. nil sorts before everything.
func Compare(a, b any) int {
	if a == nil || b == nil {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return -1
		}
		return 1
	}
	if ia, ok := asInt(a); ok {
		if ib, ok := asInt(b); ok {
			return cmp3(ia, ib)
		}
	}
	if fa, ok := asFloat(a); ok {
		if fb, ok := asFloat(b); ok {
			return cmp3(fa, fb)
		}
	}
	return cmp3(Text(a), Text(b))
}

func cmp3[T int64 | float64 | string](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func asInt(v any) (int64, bool) {
	switch x := v.(type) {
	case int64:
		return x, true
	case int:
		return int64(x), true
	case int32:
		return int64(x), true
	case json.Number:
		i, err := x.Int64()
		return i, err == nil
	case string:
		i, err := strconv.ParseInt(x, 10, 64)
		return i, err == nil
	}
	return 0, false
}

func asFloat(v any) (float64, bool) {
	var f float64
	switch x := v.(type) {
	case float64:
		f = x
	case float32:
		f = float64(x)
	case int64:
		f = float64(x)
	case int:
		f = float64(x)
	case int32:
		f = float64(x)
	case json.Number:
		var err error
		if f, err = x.Float64(); err != nil {
			return 0, false
		}
	case string:
		var err error
		if f, err = strconv.ParseFloat(x, 64); err != nil {
			return 0, false
		}
	default:
		return 0, false
	}
	return f, !math.IsNaN(f) && !math.IsInf(f, 0)
}

// Text is the text form of a cursor value used for string comparison and bookmarks.
func Text(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

// BookmarkValue turns a cursor value into what a bookmark may hold (a JSON scalar): ints
// become int64, times RFC 3339 text, bytes base64 text; strings and floats stay.
func BookmarkValue(v any) any {
	switch x := v.(type) {
	case nil, string, int64, float64, bool:
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case float32:
		return float64(x)
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		if f, err := x.Float64(); err == nil {
			return f
		}
		return string(x)
	}
	return Text(v)
}

// EdgeBookmark decides the bookmark of a page read in ascending cursor order. values
// are the page's cursor values in order; next is the cursor value of the first row after
// the page, when hasNext.
//
// Resuming after value v reads rows with cursor > v, so a page may only bookmark its last
// value when the next row does not share it; otherwise the rows of that value after the
// page edge would be skipped. In that case the bookmark steps back to the greatest value
// in the page strictly below the tie (those tied rows are read again on resume, which
// at-least-once delivery allows). ok is false when no value of the page is safe: the page
// must then carry no bookmark and the previous one stays. nil values (SQL NULL) are never
// a bookmark.
func EdgeBookmark(values []any, next any, hasNext bool) (value any, ok bool) {
	i := len(values) - 1
	for i >= 0 && values[i] == nil {
		i--
	}
	if i < 0 {
		return nil, false
	}
	last := values[i]
	if !hasNext || next == nil || Compare(next, last) != 0 {
		return last, true
	}
	for j := i - 1; j >= 0; j-- {
		if values[j] != nil && Compare(values[j], last) != 0 {
			return values[j], true
		}
	}
	return nil, false
}
