package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/adapters/connectors/internal/jsonenc"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// maxParams bounds the parameters of one INSERT. SQLite allows 32766, but the driver
// matches each parameter to its argument by a linear scan, so binding costs grow with
// the square of the count: measured on 5-column pages, 100–400 parameters per statement
// insert fastest, 4000 at less than half the speed and 32766 not in minutes.
const maxParams = 200

func createTableSQL(t tableName, key []string, p *execute.Page) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE IF NOT EXISTS " + t.quoted() + " (")
	for i, c := range p.Columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(c) + " " + columnType(p, i))
	}
	if len(key) > 0 {
		b.WriteString(", PRIMARY KEY (")
		for i, k := range key {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quote(k))
		}
		b.WriteString(")")
	}
	b.WriteString(")")
	return b.String()
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
	b.WriteString("INSERT INTO " + o.table.quoted() + " (")
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(c))
	}
	b.WriteString(") VALUES ")
	tuple := "(" + strings.Repeat("?, ", len(cols)-1) + "?)"
	for i := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(tuple)
	}
	if o.mode == pipeline.Upsert {
		b.WriteString(" ON CONFLICT (")
		for i, k := range o.key {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(quote(k))
		}
		b.WriteString(") DO ")
		var set []string
		for _, c := range cols {
			if !slices.Contains(o.key, c) {
				set = append(set, quote(c)+" = excluded."+quote(c))
			}
		}
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
			if len(r) != nc {
				return fmt.Errorf("row has %d values for %d columns", len(r), nc)
			}
			for j, v := range r {
				sv, err := sqlValue(v)
				if err != nil {
					return fmt.Errorf("column %q: %w", p.Columns[j], err)
				}
				args = append(args, sv)
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
	pos := make([]int, len(o.key))
	conds := make([]string, len(o.key))
	for i, k := range o.key {
		pos[i] = slices.Index(p.Columns, k)
		conds[i] = quote(k) + " IS ?"
	}
	stmt, err := tx.PrepareContext(ctx, "DELETE FROM "+o.table.quoted()+" WHERE "+strings.Join(conds, " AND "))
	if err != nil {
		return err
	}
	defer stmt.Close()
	args := make([]any, len(pos))
	for _, r := range p.Rows {
		for i, j := range pos {
			v, err := sqlValue(r[j])
			if err != nil {
				return fmt.Errorf("column %q: %w", o.key[i], err)
			}
			args[i] = v
		}
		if _, err := stmt.ExecContext(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

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
	case int:
		return int64(x), nil
	case int32:
		return int64(x), nil
	case int16:
		return int64(x), nil
	case int8:
		return int64(x), nil
	case uint32:
		return int64(x), nil
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
	case map[string]any, []any, []string:
		b, err := jsonenc.AppendValue(nil, x)
		if err != nil {
			return nil, err
		}
		return string(b), nil
	}
	return nil, fmt.Errorf("unsupported value type %T", v)
}
