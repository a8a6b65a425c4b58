package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sluicehq/sluice/application/execute"
)

// pgxQuerier is what catalog lookups need: a connection or a transaction.
type pgxQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// column is one column of the target table.
type column struct {
	name string
	kind kind
	oid  uint32
}

// table is the target table as the catalog describes it; nil while it does not exist.
type table struct {
	cols   []column
	byName map[string]int
}

// lookup finds the table column for a page column: the same name, else the one column
// whose name differs only in case (a source often returns upper-case names).
func (t *table) lookup(name string) (int, bool) {
	if i, ok := t.byName[name]; ok {
		return i, true
	}
	found := -1
	for i, c := range t.cols {
		if strings.EqualFold(c.name, name) {
			if found >= 0 {
				return 0, false
			}
			found = i
		}
	}
	return found, found >= 0
}

// loadTable reads the table's columns and how each wants its values; nil when the table
// does not exist.
func loadTable(ctx context.Context, q pgxQuerier, name tableName) (*table, error) {
	rows, err := q.Query(ctx, `SELECT a.attname, a.atttypid, t.typcategory
FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid
WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped
ORDER BY a.attnum`, name.quoted())
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	t := &table{byName: map[string]int{}}
	for rows.Next() {
		var (
			n   string
			oid uint32
			cat string
		)
		if err := rows.Scan(&n, &oid, &cat); err != nil {
			return nil, err
		}
		t.byName[n] = len(t.cols)
		t.cols = append(t.cols, column{name: n, kind: kindOf(oid, cat), oid: oid})
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(t.cols) == 0 {
		return nil, nil
	}
	return t, nil
}

func kindOf(oid uint32, category string) kind {
	switch {
	case oid == pgtype.JSONOID || oid == pgtype.JSONBOID:
		return kindJSON
	case oid == pgtype.ByteaOID:
		return kindBytea
	case category == "A":
		return kindArray
	}
	return kindPlain
}

// createTableSQL creates the table with the given column types and, when key is set, a
// primary key on it (so upserts work on the new table).
func createTableSQL(t tableName, cols, types, key []string) string {
	var b strings.Builder
	b.WriteString("CREATE TABLE IF NOT EXISTS " + t.quoted() + " (")
	for i, c := range cols {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quote(c) + " " + types[i])
	}
	if len(key) > 0 {
		b.WriteString(", PRIMARY KEY (" + quoteAll(key) + ")")
	}
	b.WriteString(")")
	return b.String()
}

// pageTypes maps each column's first non-NULL value in the page onto a column type.
func pageTypes(p *execute.Page, cols []int) []string {
	out := make([]string, len(cols))
	for i, j := range cols {
		out[i] = "text"
		for _, r := range p.Rows {
			if t, ok := typeOf(r[j]); ok {
				out[i] = t
				break
			}
		}
	}
	return out
}

func typeOf(v any) (string, bool) {
	switch v.(type) {
	case nil:
		return "", false
	case int64, int, int32, int16, int8, uint32:
		return "bigint", true
	case uint64, json.Number:
		return "numeric", true
	case float64, float32:
		return "double precision", true
	case bool:
		return "boolean", true
	case time.Time:
		return "timestamptz", true
	case []byte:
		return "bytea", true
	case map[string]any, []any, []string:
		return "jsonb", true
	}
	return "text", true
}

// missingTable is the error for a table that is not there and may not be created.
func missingTable(t tableName) error {
	return fmt.Errorf("table %q does not exist; create it or set create_table: true", t.String())
}
