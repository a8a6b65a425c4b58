// Package jsonenc appends page values as JSON. It is hand-written because encoding/json's
// reflection costs more than the rest of a CSV→JSONL pipeline together, and because
// strconv.Quote escapes differently from JSON (\x, \U, \a).
//
// Encoding follows encoding/json where both are defined (escapes, float formatting,
// sorted map keys, U+FFFD for invalid UTF-8, escaped U+2028/U+2029) with two choices of
// its own: HTML characters are not escaped, and a whole float64 keeps a ".0" so that
// decoding tells it apart from an integer again (1.0 stays a float through a file).
package jsonenc
