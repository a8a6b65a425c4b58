package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlsink"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// maxParams bounds the parameters of one INSERT. SQLite allows 32766, but the driver
// matches each parameter to its argument by a linear scan, so binding costs grow with
// the square of the count: measured on 5-column pages, 100–400 parameters per statement
// insert fastest, 4000 at less than half the speed and 32766 not in minutes.
const maxParams = 200

func createTableSQL(t tableName, key []string, p *execute.Page) string {
	return sqlsink.CreateTable(dialect{}, t.quoted(), key, p, func(i int, _ bool) string { return columnType(p, i) }, "")
}

// columnType maps the first non-NULL value of column i onto a SQLite type.
func columnType(p *execute.Page, i int) string {
	for _, r := range p.Rows {
		switch r[i].(type) {
		case nil:
			continue
		case int64, int, int32, int16, int8, uint32, uint16, uint8, bool:
			return "INTEGER"
		case float64, float32:
			return "REAL"
		case []byte:
			return "BLOB"
		}
		return "TEXT"
	}
	return "TEXT"
}

func insertSQL(o sinkOptions, cols []string, rows int) string {
	var b strings.Builder
	b.WriteString(sqlsink.InsertHead(dialect{}, o.table.quoted(), cols))
	tuple := sqlsink.Tuple(len(cols))
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tuple)
	}
	if o.mode == pipeline.Upsert {
		b.WriteString(" ON CONFLICT (" + sqlsink.QuoteAll(dialect{}, o.key) + ") DO ")
		set := sqlsink.UpdateSet(cols, o.key, func(c string) string { return quote(c) + " = excluded." + quote(c) })
		if len(set) == 0 {
			b.WriteString("NOTHING")
		} else {
			b.WriteString("UPDATE SET " + strings.Join(set, ", "))
		}
	}
	return b.String()
}

// insertRows writes the page with prepared multi-row INSERTs: one statement for full
// chunks, one for the remainder.
func insertRows(ctx context.Context, tx *sql.Tx, o sinkOptions, p *execute.Page) error {
	nc := len(p.Columns)
	chunk := max(1, min(len(p.Rows), maxParams/nc))
	var full *sql.Stmt
	args := make([]any, 0, chunk*nc)
	for start := 0; start < len(p.Rows); start += chunk {
		rows := p.Rows[start:min(start+chunk, len(p.Rows))]
		args = args[:0]
		for _, r := range rows {
			var err error
			if args, err = sqlsink.AppendRow(args, dialect{}, p.Columns, r); err != nil {
				return err
			}
		}
		if len(rows) == chunk {
			if full == nil {
				var err error
				if full, err = tx.PrepareContext(ctx, insertSQL(o, p.Columns, chunk)); err != nil {
					return err
				}
				defer full.Close()
			}
			if _, err := full.ExecContext(ctx, args...); err != nil {
				return err
			}
			continue
		}
		if _, err := tx.ExecContext(ctx, insertSQL(o, p.Columns, len(rows)), args...); err != nil {
			return err
		}
	}
	return nil
}

// deleteRows deletes the rows whose key equals each page row's key. IS rather than =
// so a NULL key deletes NULL-keyed rows, as an upsert of the same row would address.
func deleteRows(ctx context.Context, tx *sql.Tx, o sinkOptions, p *execute.Page) error {
	pos := sqlsink.KeyPositions(p.Columns, o.key)
	conds := make([]string, len(o.key))
	for i, k := range o.key {
		conds[i] = quote(k) + " IS ?"
	}
	stmt, err := tx.PrepareContext(ctx, "DELETE FROM "+o.table.quoted()+" WHERE "+strings.Join(conds, " AND "))
	if err != nil {
		return err
	}
	defer stmt.Close()
	args := make([]any, 0, len(pos))
	for _, r := range p.Rows {
		if args, err = sqlsink.AppendKey(args[:0], dialect{}, o.key, pos, r); err != nil {
			return err
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

// dialect is SQLite's quoting and values for the shared statement builders.
type dialect struct{}

func (dialect) Quote(name string) string { return quote(name) }
func (dialect) Value(v any) (any, error) { return sqlValue(v) }

// sqlValue converts a page value into what SQLite stores (see the package doc).
func sqlValue(v any) (any, error) {
	switch x := v.(type) {
	case nil, int64, float64, string, []byte:
		return x, nil
	case bool:
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	case time.Time:
		return x.Format(time.RFC3339Nano), nil
	case uint16:
		return int64(x), nil
	case uint8:
		return int64(x), nil
	case uint64:
		if x > math.MaxInt64 {
			return strconv.FormatUint(x, 10), nil
		}
		return int64(x), nil
	case float32:
		return float64(x), nil
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i, nil
		}
		if f, err := x.Float64(); err == nil {
			return f, nil
		}
		return string(x), nil
	}
	return sqlsink.Value(v)
}
