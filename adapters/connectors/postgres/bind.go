package postgres

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/sluicehq/sluice/domain/pipeline"
)

// A query's ${param.*}, ${now.*} and ${backfill.*} values are bind parameters $1…$n of the
// statement (SPEC §14.2), sent in text format with the type the param declares. A string
// goes untyped, as a quoted literal would, so the server types it from its place
// (day = $1 against a date column reads a date).

// render writes a statement with $1…$n placeholders, numbered from first.
func render(s pipeline.Statement, first int) string {
	return s.Render(func(i int) string { return "$" + strconv.Itoa(first+i) })
}

// bindArgs encodes a statement's arguments as text with their type OIDs (0: untyped).
func bindArgs(s pipeline.Statement) ([][]byte, []uint32) {
	vals := make([][]byte, len(s.Args))
	oids := make([]uint32, len(s.Args))
	for i, a := range s.Args {
		switch v := a.(type) {
		case int64:
			vals[i], oids[i] = []byte(strconv.FormatInt(v, 10)), pgtype.Int8OID
		case float64:
			vals[i], oids[i] = []byte(strconv.FormatFloat(v, 'g', -1, 64)), pgtype.Float8OID
		case bool:
			vals[i], oids[i] = []byte(strconv.FormatBool(v)), pgtype.BoolOID
		case pipeline.Date:
			vals[i], oids[i] = []byte(v.String()), pgtype.DateOID
		case time.Time:
			vals[i], oids[i] = []byte(v.Format(time.RFC3339Nano)), pgtype.TimestamptzOID
		default:
			vals[i] = []byte(pipeline.ParamText(a))
		}
	}
	return vals, oids
}

// copyQuery is `COPY (query) TO STDOUT` for a query with bind parameters, which COPY
// cannot take: each value is first stored, as a bind parameter, in a setting of this
// session (sluice.bind_N), and the query reads it back with current_setting cast to
// the type the server gave that parameter when the query was prepared. The value is
// never part of the text, and it means in COPY what it means in the prepared read.
func copyQuery(ctx context.Context, conn *pgconn.PgConn, query pipeline.Statement, types []string) (string, error) {
	if len(query.Args) > 0 {
		sets := make([]string, len(query.Args))
		for i := range query.Args {
			sets[i] = fmt.Sprintf("set_config('sluice.bind_%d', $%d, false)", i+1, i+1)
		}
		vals, _ := bindArgs(query)
		if _, err := conn.ExecParams(ctx, "SELECT "+strings.Join(sets, ", "), vals, nil, nil, nil).Close(); err != nil {
			return "", pgErr("bind the query's parameters for COPY: %s", err)
		}
	}
	text := query.Render(func(i int) string {
		return fmt.Sprintf("(current_setting('sluice.bind_%d')::%s)", i+1, types[i])
	})
	return "COPY (\n" + text + "\n) TO STDOUT", nil
}

// paramTypes names the types the server gave a prepared statement's parameters.
func paramTypes(ctx context.Context, conn *pgx.Conn, oids []uint32) ([]string, error) {
	if len(oids) == 0 {
		return nil, nil
	}
	rows, err := conn.Query(ctx, `SELECT format_type(t, NULL) FROM unnest($1::oid[]) WITH ORDINALITY AS u(t, n) ORDER BY n`, oids)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// bigints runs a statement that returns one row of bigint columns (NULL → nil).
func bigints(ctx context.Context, conn *pgconn.PgConn, q pipeline.Statement) ([]*int64, error) {
	vals, oids := bindArgs(q)
	res := conn.ExecParams(ctx, render(q, 1), vals, oids, nil, nil).Read()
	if res.Err != nil {
		return nil, res.Err
	}
	if len(res.Rows) != 1 {
		return nil, fmt.Errorf("expected one row, got %d", len(res.Rows))
	}
	out := make([]*int64, len(res.Rows[0]))
	for i, b := range res.Rows[0] {
		if b == nil {
			continue
		}
		v, err := strconv.ParseInt(string(b), 10, 64)
		if err != nil {
			return nil, err
		}
		out[i] = &v
	}
	return out, nil
}
