package connectors_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors"
)

// SPEC §14.1: a run's error names columns, never row data. Each case is a message a
// database or decoder really produces.
func TestWithholdRowData(t *testing.T) {
	t.Parallel()
	cases := []struct {
		in, want string
		secret   string
	}{
		{`sink postgres: page 1: ERROR: duplicate key value violates unique constraint "orders_pkey" (SQLSTATE 23505); Key (id)=(4711) already exists.`,
			`sink postgres: page 1: ERROR: duplicate key value violates unique constraint "orders_pkey" (SQLSTATE 23505); Key (id)=(…)`, "4711"},
		{`ERROR: insert or update on table "o" violates foreign key constraint "o_c_fkey" (SQLSTATE 23503); Key (customer, region)=(acme-secret, eu) is not present in table "c".`,
			`ERROR: insert or update on table "o" violates foreign key constraint "o_c_fkey" (SQLSTATE 23503); Key (customer, region)=(…)`, "acme-secret"},
		{`ERROR: new row for relation "o" violates check constraint "o_qty_check" (SQLSTATE 23514); Failing row contains (1, top-secret, -5).`,
			`ERROR: new row for relation "o" violates check constraint "o_qty_check" (SQLSTATE 23514); Failing row contains (…)`, "top-secret"},
		// The injection of the issue: another table's rows cast into an integer.
		{`source postgres: query: ERROR: invalid input syntax for type integer: "alice-pw,bob-pw" (SQLSTATE 22P02)`,
			`source postgres: query: ERROR: invalid input syntax for type integer: "…" (SQLSTATE 22P02)`, "alice-pw"},
		{`ERROR: invalid input syntax for type integer: "x" (SQLSTATE 22P02); COPY orders, line 2, column id: "x"`,
			`ERROR: invalid input syntax for type integer: "…" (SQLSTATE 22P02); COPY orders, line 2, column id: "…"`, `"x"`},
		{`ERROR: value "99999999999" is out of range for type integer (SQLSTATE 22003)`,
			`ERROR: value "…" is out of range for type integer (SQLSTATE 22003)`, "99999999999"},
		{`Error 1062 (23000): Duplicate entry 'secret-key-5' for key 'PRIMARY'`,
			`Error 1062 (23000): Duplicate entry '…' for key 'PRIMARY'`, "secret-key-5"},
		{`Error 1366 (22007): Incorrect integer value: 'it''s-secret' for column 'id' at row 1`,
			`Error 1366 (22007): Incorrect integer value: '…' for column 'id' at row 1`, "secret"},
		{`file: a.csv: cursor: strconv.ParseInt: parsing "root:x:0:0": invalid syntax`,
			`file: a.csv: cursor: strconv.ParseInt: parsing "…": invalid syntax`, "root:x"},
	}
	for _, c := range cases {
		got := connectors.WithholdRowData(c.in)
		require.Equal(t, c.want, got)
		require.NotContains(t, got, c.secret)
	}
	// Names are kept: columns, constraints, relations, the SQLSTATE.
	for _, keep := range []string{
		`ERROR: column "secret_col" of relation "orders" does not exist (SQLSTATE 42703)`,
		`ERROR: null value in column "id" of relation "o" violates not-null constraint (SQLSTATE 23502)`,
		`UNIQUE constraint failed: orders.id`,
		`Error 1054 (42S22): Unknown column 'zip' in 'field list'`,
	} {
		require.Equal(t, keep, connectors.WithholdRowData(keep))
	}
}
