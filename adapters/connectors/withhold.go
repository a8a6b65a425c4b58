package connectors

import "regexp"

// Withheld replaces row data cut out of an error message.
const Withheld = "…"

// withholdRules find row data that databases and decoders quote back in their error
// messages. Each keeps what names the problem (the key's columns, the type, the
// constraint) and drops the value. Identifiers stay: a database quotes them after a
// word (column "x", constraint "y"), while values follow a colon, "value", "entry" or
// "parsing", or sit in a key's value list.
var withholdRules = []struct {
	re   *regexp.Regexp
	with string
}{
	// PostgreSQL details of integrity errors: Key (id, day)=(5, 2026-01-01) already exists.
	{regexp.MustCompile(`(Key \([^)]*\)=)\(.*`), "${1}(" + Withheld + ")"},
	// PostgreSQL: Failing row contains (5, secret, …).
	{regexp.MustCompile(`(Failing row contains )\(.*`), "${1}(" + Withheld + ")"},
	// PostgreSQL data exceptions: invalid input syntax for type integer: "abc"; COPY's
	// context: COPY t, line 2, column id: "abc".
	{regexp.MustCompile(`(: )"(?:[^"]|"")*"`), `${1}"` + Withheld + `"`},
	// PostgreSQL: value "99999999999" is out of range for type integer.
	{regexp.MustCompile(`(\bvalue )"(?:[^"]|"")*"`), `${1}"` + Withheld + `"`},
	// MySQL/MariaDB: Duplicate entry '5' for key 'PRIMARY'; Incorrect integer value: 'abc'
	// for column 'id' at row 1; Truncated incorrect DOUBLE value: 'abc'.
	{regexp.MustCompile(`(?i)(\bentry |\bvalue:? )'(?:[^'\\]|\\.|'')*'`), "${1}'" + Withheld + "'"},
	// Go's strconv and similar: parsing "abc": invalid syntax.
	{regexp.MustCompile(`(\bparsing )"(?:[^"\\]|\\.)*"`), `${1}"` + Withheld + `"`},
}

// WithholdRowData removes the row data a run's error message may quote — a key's
// values, a failing row, a value that did not convert — and keeps column names, types
// and constraint names (SPEC §14.1). Run errors are read by every viewer of the run, and
// a config that reads a file it should not, or casts another table's rows into an
// integer, would otherwise publish the data through them.
func WithholdRowData(msg string) string {
	for _, r := range withholdRules {
		msg = r.re.ReplaceAllString(msg, r.with)
	}
	return msg
}
