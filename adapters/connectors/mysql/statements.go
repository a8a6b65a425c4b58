package mysql

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/adapters/connectors/internal/pager"
	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlsink"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// Statement size bounds. Arguments are interpolated into the statement text, so the
// server's max_allowed_packet (16 MiB on MariaDB, 64 MiB on MySQL by default) is the real
// limit; 4 MiB of values per statement stays well under it while keeping round trips few.
const (
	maxStatementBytes = 4 << 20
	maxStatementArgs  = 20000
	maxDeleteKeys     = 1000
)

// table is the target table's columns, by lower-cased name (MySQL column names are
// case-insensitive).
type table struct{ cols map[string]bool }

func (t *table) has(c string) bool { return t.cols[strings.ToLower(c)] }

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// loadTable reads the table's columns; nil when the table does not exist.
func loadTable(ctx context.Context, q queryer, t tableName) (*table, error) {
	schema := any(nil)
	if t.schema != "" {
		schema = t.schema
	}
	rows, err := q.QueryContext(ctx, `SELECT COLUMN_NAME FROM information_schema.COLUMNS
WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?`, schema, t.name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := &table{cols: map[string]bool{}}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		out.cols[strings.ToLower(c)] = true
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out.cols) == 0 {
		return nil, nil
	}
	return out, nil
}

// checkUnique refuses an upsert whose key no PRIMARY KEY or UNIQUE index covers exactly:
// ON DUPLICATE KEY UPDATE would otherwise insert duplicates, or update by another key.
func (s *sink) checkUnique(ctx context.Context) error {
	schema := any(nil)
	if s.opts.table.schema != "" {
		schema = s.opts.table.schema
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT INDEX_NAME, COLUMN_NAME FROM information_schema.STATISTICS
WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ? AND NON_UNIQUE = 0
ORDER BY INDEX_NAME, SEQ_IN_INDEX`, schema, s.opts.table.name)
	if err != nil {
		return fmt.Errorf("read the table's indexes: %w", err)
	}
	defer rows.Close()
	indexes := map[string][]string{}
	for rows.Next() {
		var idx, col string
		if err := rows.Scan(&idx, &col); err != nil {
			return err
		}
		indexes[idx] = append(indexes[idx], strings.ToLower(col))
	}
	if err := rows.Err(); err != nil {
		return err
	}
	want := make([]string, len(s.opts.key))
	for i, k := range s.opts.key {
		want[i] = strings.ToLower(k)
	}
	slices.Sort(want)
	for _, cols := range indexes {
		slices.Sort(cols)
		if slices.Equal(cols, want) {
			return nil
		}
	}
	return fmt.Errorf("upsert needs a PRIMARY KEY or UNIQUE index on (%s); create one, e.g. ALTER TABLE %s ADD UNIQUE (%s)",
		strings.Join(s.opts.key, ", "), s.opts.table.String(), strings.Join(s.opts.key, ", "))
}

func createTableSQL(t tableName, key []string, p *execute.Page) string {
	return sqlsink.CreateTable(dialect{}, t.quoted(), key, p, func(i int, key bool) string { return columnType(p, i, key) },
		" ENGINE=InnoDB DEFAULT CHARSET=utf8mb4")
}

// columnType maps the first non-NULL value of column i onto a type; key columns get
// bounded types, as MySQL indexes no unbounded text.
func columnType(p *execute.Page, i int, key bool) string {
	for _, r := range p.Rows {
		switch r[i].(type) {
		case nil:
			continue
		case int64, int, int32, int16, int8, uint32, uint16, uint8:
			return "BIGINT"
		case uint64:
			return "BIGINT UNSIGNED"
		case json.Number:
			return "DECIMAL(65,30)"
		case float64, float32:
			return "DOUBLE"
		case bool:
			return "BOOLEAN"
		case time.Time:
			return "DATETIME(6)"
		case []byte:
			if key {
				return "VARBINARY(255)"
			}
			return "LONGBLOB"
		case map[string]any, []any, []string:
			return "JSON"
		}
		break
	}
	if key {
		return "VARCHAR(255)"
	}
	return "LONGTEXT"
}

// insertRows writes the page with multi-row INSERTs (upsert: ON DUPLICATE KEY UPDATE
// c = VALUES(c), which MySQL and MariaDB both accept; the last row of a key wins).
func (s *sink) insertRows(ctx context.Context, tx *sql.Tx, p *execute.Page) error {
	head := sqlsink.InsertHead(dialect{}, s.opts.table.quoted(), p.Columns)
	tuple := sqlsink.Tuple(len(p.Columns))
	tail := ""
	if s.opts.mode == pipeline.Upsert {
		set := sqlsink.UpdateSet(p.Columns, s.opts.key, func(c string) string { return quote(c) + " = VALUES(" + quote(c) + ")" })
		if len(set) == 0 { // only key columns: a duplicate changes nothing
			set = append(set, quote(p.Columns[0])+" = "+quote(p.Columns[0]))
		}
		tail = " ON DUPLICATE KEY UPDATE " + strings.Join(set, ", ")
	}
	nc := len(p.Columns)
	for start := 0; start < len(p.Rows); {
		s.args = s.args[:0]
		s.sql.Reset()
		s.sql.WriteString(head)
		size := 0
		n := 0
		for start+n < len(p.Rows) && (n == 0 || (size < maxStatementBytes && len(s.args)+nc <= maxStatementArgs)) {
			r := p.Rows[start+n]
			var err error
			if s.args, err = sqlsink.AppendRow(s.args, dialect{}, p.Columns, r); err != nil {
				return err
			}
			size += int(pager.Size(r))
			if n > 0 {
				s.sql.WriteString(", ")
			}
			s.sql.WriteString(tuple)
			n++
		}
		s.sql.WriteString(tail)
		if _, err := tx.ExecContext(ctx, s.sql.String(), s.args...); err != nil {
			return err
		}
		start += n
	}
	return nil
}

// deleteRows deletes the rows whose key equals a page row's key (a NULL key matches
// nothing, as in any SQL comparison), in chunks of IN lists.
func (s *sink) deleteRows(ctx context.Context, tx *sql.Tx, p *execute.Page) error {
	pos := sqlsink.KeyPositions(p.Columns, s.opts.key)
	lhs := quote(s.opts.key[0])
	tuple := "?"
	if len(pos) > 1 {
		lhs = "(" + quoteAll(s.opts.key) + ")"
		tuple = sqlsink.Tuple(len(pos))
	}
	for start := 0; start < len(p.Rows); start += maxDeleteKeys {
		rows := p.Rows[start:min(start+maxDeleteKeys, len(p.Rows))]
		s.args = s.args[:0]
		for _, r := range rows {
			var err error
			if s.args, err = sqlsink.AppendKey(s.args, dialect{}, s.opts.key, pos, r); err != nil {
				return err
			}
		}
		list := strings.TrimSuffix(strings.Repeat(tuple+", ", len(rows)), ", ")
		if _, err := tx.ExecContext(ctx, "DELETE FROM "+s.opts.table.quoted()+" WHERE "+lhs+" IN ("+list+")", s.args...); err != nil {
			return err
		}
	}
	return nil
}

// dialect is MySQL's quoting and values for the shared statement builders.
type dialect struct{}

func (dialect) Quote(name string) string { return quote(name) }
func (dialect) Value(v any) (any, error) { return arg(v) }

// arg converts a page value into what the driver sends: maps and lists as JSON text,
// times in UTC (the session's time zone), numbers and bytes as they are.
func arg(v any) (any, error) {
	switch x := v.(type) {
	case nil, int64, string, []byte, bool, uint64:
		return x, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("%v has no MySQL form", x)
		}
		return x, nil
	case time.Time:
		return x.UTC(), nil
	case float32:
		return arg(float64(x))
	case json.Number:
		return string(x), nil
	}
	return sqlsink.Value(v)
}
