package sqlsink

import (
	"fmt"
	"slices"
	"strings"

	"github.com/sluicehq/sluice/application/execute"
)

// Dialect is what differs between the databases in the shared statement text.
type Dialect interface {
	// Quote makes name an identifier, whatever it contains.
	Quote(name string) string
	// Value converts a page value into what the driver sends.
	Value(v any) (any, error)
}

// QuoteAll quotes names and joins them with ", ".
func QuoteAll(d Dialect, names []string) string {
	q := make([]string, len(names))
	for i, c := range names {
		q[i] = d.Quote(c)
	}
	return strings.Join(q, ", ")
}

// Tuple is a parenthesised list of n placeholders.
func Tuple(n int) string {
	return "(" + strings.Repeat("?, ", n-1) + "?)"
}

// InsertHead is "INSERT INTO table (columns) VALUES ".
func InsertHead(d Dialect, table string, cols []string) string {
	return "INSERT INTO " + table + " (" + QuoteAll(d, cols) + ") VALUES "
}

// UpdateSet renders set(column) for each column not in key, in page order.
func UpdateSet(cols, key []string, set func(col string) string) []string {
	var out []string
	for _, c := range cols {
		if !slices.Contains(key, c) {
			out = append(out, set(c))
		}
	}
	return out
}

// CreateTable is a CREATE TABLE IF NOT EXISTS for the page's columns, typed by
// colType (given the column's index and whether it is a key column), with key as the
// primary key and suffix (table options) after the closing parenthesis.
func CreateTable(d Dialect, table string, key []string, p *execute.Page, colType func(i int, key bool) string, suffix string) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE IF NOT EXISTS " + table + " (")
	for i, c := range p.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(d.Quote(c) + " " + colType(i, slices.Contains(key, c)))
	}
	if len(key) > 0 {
		b.WriteString(", PRIMARY KEY (" + QuoteAll(d, key) + ")")
	}
	b.WriteString(")" + suffix)
	return b.String()
}

// AppendRow appends row r's values, converted by the dialect, to args; a row whose
// length differs from the columns' is refused.
func AppendRow(args []any, d Dialect, cols []string, r []any) ([]any, error) {
	if len(r) != len(cols) {
		return args, fmt.Errorf("row has %d values for %d columns", len(r), len(cols))
	}
	for j, v := range r {
		a, err := d.Value(v)
		if err != nil {
			return args, fmt.Errorf("column %q: %w", cols[j], err)
		}
		args = append(args, a)
	}
	return args, nil
}

// KeyPositions is the index in cols of each key column.
func KeyPositions(cols, key []string) []int {
	pos := make([]int, len(key))
	for i, k := range key {
		pos[i] = slices.Index(cols, k)
	}
	return pos
}

// AppendKey appends row r's key values (at pos, from KeyPositions), converted by the
// dialect, to args.
func AppendKey(args []any, d Dialect, key []string, pos []int, r []any) ([]any, error) {
	for i, j := range pos {
		a, err := d.Value(r[j])
		if err != nil {
			return args, fmt.Errorf("column %q: %w", key[i], err)
		}
		args = append(args, a)
	}
	return args, nil
}

// MissingKey is the first key column not among cols.
func MissingKey(cols, key []string) (string, bool) {
	for _, k := range key {
		if !slices.Contains(cols, k) {
			return k, true
		}
	}
	return "", false
}
