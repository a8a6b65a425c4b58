package sqlspec

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/application/execute"
)

// Query reads the source's query, trimmed of surrounding space and trailing semicolons
// (a query is wrapped as a subquery for incremental reads, where a semicolon would end it
// early).
func Query(c map[string]any) (string, error) {
	query, err := cfg.String(c, "query", "")
	if err != nil {
		return "", err
	}
	query = strings.TrimRight(strings.TrimSpace(query), "; \t\n")
	if query == "" {
		return "", errors.New("config key \"query\" is required")
	}
	return query, nil
}

// IncrementalQuery wraps query so its rows come ordered by the (quoted) cursor column
// and, with a placeholder, only those after it. The line breaks keep a trailing comment
// in query from eating the rest.
func IncrementalQuery(query, quotedCursor, placeholder string) string {
	c := "q." + quotedCursor
	var b strings.Builder
	b.WriteString("SELECT * FROM (\n")
	b.WriteString(query)
	b.WriteString("\n) AS q")
	if placeholder != "" {
		b.WriteString(" WHERE " + c + " > " + placeholder)
	}
	b.WriteString(" ORDER BY " + c)
	return b.String()
}

// CursorAt is the index of the cursor column among the query's columns, refused when
// the query has no such column.
func CursorAt(cols []string, cursor string) (int, error) {
	i := slices.Index(cols, cursor)
	if i < 0 {
		return -1, fmt.Errorf("the cursor column %q is not a column of the query (columns: %s)", cursor, strings.Join(cols, ", "))
	}
	return i, nil
}

// PageOf ends a source's Next with what its pager returned: io.EOF at the end; another
// error ends the read and is reported as the cancellation when ctx ended first, else
// with the connection's secrets scrubbed. name prefixes the messages.
func PageOf(ctx context.Context, name string, p *execute.Page, err error, ended *bool, sc *Scrubber) (*execute.Page, error) {
	switch {
	case errors.Is(err, io.EOF):
		*ended = true
		return nil, io.EOF
	case err != nil:
		*ended = true
		if ctx.Err() != nil {
			return nil, fmt.Errorf("%s: %w", name, ctx.Err())
		}
		return nil, fmt.Errorf("%s: %w", name, sc.Wrap(err))
	}
	return p, nil
}

// JSONNumbers turns the json.Numbers of a value decoded with UseNumber into int64 where
// the text is an integer and float64 otherwise, in place through lists and objects, so
// a JSON column reads back with the same types a JSON file source gives.
func JSONNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case []any:
		for i := range x {
			x[i] = JSONNumbers(x[i])
		}
	case map[string]any:
		for k := range x {
			x[k] = JSONNumbers(x[k])
		}
	}
	return v
}
