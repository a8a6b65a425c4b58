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
	"github.com/sluicehq/sluice/domain/pipeline"
)

// Query reads the source's query, trimmed of surrounding space and trailing semicolons
// (a query is wrapped as a subquery for incremental reads, where a semicolon would end it
// early). A query whose params were resolved is a pipeline.Statement: its values stay
// bind parameters on every read path (SPEC §14.2); plain text has none.
func Query(c map[string]any) (pipeline.Statement, error) {
	var stmt pipeline.Statement
	switch v := c[pipeline.KeyQuery].(type) {
	case pipeline.Statement:
		stmt = v
	default:
		text, err := cfg.String(c, pipeline.KeyQuery, "")
		if err != nil {
			return stmt, err
		}
		stmt = pipeline.NewStatement(text)
	}
	stmt = stmt.Trim()
	if len(stmt.Args) == 0 && stmt.Text[0] == "" {
		return stmt, errors.New("config key \"query\" is required")
	}
	return stmt, nil
}

// IncrementalQuery wraps query so its rows come ordered by the (quoted) cursor column
// and, with a placeholder, only those after it. The line breaks keep a trailing comment
// in query from eating the rest. The placeholder follows the query's own bind
// parameters, so its argument goes last.
func IncrementalQuery(query pipeline.Statement, quotedCursor, placeholder string) pipeline.Statement {
	c := "q." + quotedCursor
	suffix := "\n) AS q"
	if placeholder != "" {
		suffix += " WHERE " + c + " > " + placeholder
	}
	return query.Wrap("SELECT * FROM (\n", suffix+" ORDER BY "+c)
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
