package mysql

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/sluicehq/sluice/domain/pipeline"
)

// render writes a statement with MySQL's positional placeholders.
func render(s pipeline.Statement) string { return s.Render(func(int) string { return "?" }) }

// args are a statement's bind parameters as the driver takes them: a date as its
// YYYY-MM-DD text (MySQL compares it with DATE and DATETIME columns as a date), a time as
// time.Time (sent as a DATETIME in UTC, the session's zone).
func args(s pipeline.Statement) []any {
	out := make([]any, len(s.Args))
	for i, a := range s.Args {
		if d, ok := a.(pipeline.Date); ok {
			out[i] = d.String()
			continue
		}
		out[i] = a
	}
	return out
}

// bound runs a read with its arguments as real bind parameters. The connection
// interpolates arguments into the text (the sink's batched statements rely on it), so a
// read with arguments is prepared on the server instead, where a value can never be
// read as SQL (SPEC §14.2). stmt is nil without arguments; the caller closes it after
// the rows.
func bound(ctx context.Context, db *sql.DB, text string, binds []any) (*sql.Rows, *sql.Stmt, error) {
	if len(binds) == 0 {
		rows, err := db.QueryContext(ctx, text)
		return rows, nil, err
	}
	stmt, err := db.PrepareContext(ctx, text)
	if err != nil {
		return nil, nil, err
	}
	rows, err := stmt.QueryContext(ctx, binds...)
	if err != nil {
		stmt.Close()
		return nil, nil, err
	}
	return rows, stmt, nil
}

// describe returns the column types of query without reading a row.
func describe(ctx context.Context, db *sql.DB, query pipeline.Statement) ([]*sql.ColumnType, error) {
	q := query.Wrap("SELECT * FROM (\n", "\n) AS q LIMIT 0")
	rows, stmt, err := bound(ctx, db, render(q), args(q))
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	if stmt != nil {
		defer stmt.Close()
	}
	defer rows.Close()
	types, err := rows.ColumnTypes()
	if err != nil {
		return nil, fmt.Errorf("query: %w", err)
	}
	return types, nil
}
