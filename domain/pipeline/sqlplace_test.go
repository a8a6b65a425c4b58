package pipeline_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/pipeline"
)

func TestMisplacedDirectives(t *testing.T) {
	t.Parallel()
	type want struct {
		col     int
		where   string
		written string
		fix     string
	}
	cases := []struct {
		d    pipeline.Dialect
		sql  string
		want []want
	}{
		{pipeline.DialectPostgres, "SELECT * FROM t WHERE day = ${param.day} AND n < ${now.unix} + 1", nil},
		{pipeline.DialectPostgres, "SELECT ${param.a}::date, f(${param.b}), ${backfill.start}", nil},
		{pipeline.DialectPostgres, "SELECT 'it''s', $$ a ' b $$, \"x\" FROM t WHERE a = ${param.a}", nil},
		{pipeline.DialectPostgres, "SELECT * FROM ${env:SCHEMA}.t WHERE d = '${env:X}' AND s = $${param.s}", nil},
		{pipeline.DialectPostgres, "SELECT * FROM t WHERE day = '${param.day}'",
			[]want{{30, "inside quotes", "'${param.day}'", "${param.day}"}}},
		{pipeline.DialectPostgres, "SELECT * FROM t WHERE s LIKE '%${param.q}%'",
			[]want{{32, "inside quotes", "'%${param.q}%'", "'%' || ${param.q} || '%'"}}},
		{pipeline.DialectMySQL, "SELECT * FROM t WHERE s LIKE \"%${param.q}\"",
			[]want{{32, "inside quotes", "\"%${param.q}\"", "CONCAT(\"%\", ${param.q})"}}},
		{pipeline.DialectMySQL, "SELECT * FROM t WHERE s = 'a\\'${param.q}'",
			[]want{{31, "inside quotes", "'a\\'${param.q}'", "CONCAT('a\\'', ${param.q})"}}},
		{pipeline.DialectPostgres, "SELECT * FROM t WHERE s = E'\\'${param.q}'",
			[]want{{31, "inside quotes", "'\\'${param.q}'", "E'\\'' || ${param.q}"}}},
		{pipeline.DialectPostgres, "SELECT $q$ ${param.q} $q$",
			[]want{{12, "inside quotes", "$q$ ${param.q} $q$", "$q$ $q$ || ${param.q} || $q$ $q$"}}},
		{pipeline.DialectPostgres, "SELECT * FROM \"${param.t}\"",
			[]want{{16, "inside a quoted identifier", "\"${param.t}\"", ""}}},
		{pipeline.DialectMySQL, "SELECT * FROM `${param.t}`", []want{{16, "inside a quoted identifier", "`${param.t}`", ""}}},
		{pipeline.DialectSQLite, "SELECT * FROM [${param.t}]", []want{{16, "inside a quoted identifier", "[${param.t}]", ""}}},
		{pipeline.DialectPostgres, "SELECT * FROM sales_${param.region}",
			[]want{{21, "joined to a name or value", "sales_${param.region}", ""}}},
		{pipeline.DialectPostgres, "SELECT * FROM s.${param.t} WHERE a = ${param.a}${param.b}",
			[]want{{17, "joined to a name or value", "s.${param.t}", ""},
				{38, "joined to a name or value", "${param.a}${param.b}", ""},
				{48, "joined to a name or value", "${param.a}${param.b}", ""}}},
		{pipeline.DialectPostgres, "SELECT 1 -- ${param.a}\nFROM t",
			[]want{{13, "inside a comment, where it would never be sent", "-- ${param.a}", ""}}},
		{pipeline.DialectMySQL, "SELECT 1 # ${param.a}\n", []want{{12, "inside a comment, where it would never be sent", "# ${param.a}", ""}}},
		{pipeline.DialectSQLite, "SELECT /* ${now.date} */ 1", []want{{11, "inside a comment, where it would never be sent", "/* ${now.date} */", ""}}},
	}
	for _, tc := range cases {
		got := pipeline.MisplacedDirectives(tc.sql, tc.d)
		require.Len(t, got, len(tc.want), tc.sql)
		for i, w := range tc.want {
			require.Equal(t, w.col, got[i].Column, tc.sql)
			require.Equal(t, 1, got[i].Line, tc.sql)
			require.Equal(t, w.where, got[i].Where, tc.sql)
			require.Equal(t, w.written, got[i].Written, tc.sql)
			require.Equal(t, w.fix, got[i].Fix, tc.sql)
		}
	}

	m := pipeline.MisplacedDirectives("SELECT *\nFROM t\nWHERE day = '${param.day}'", pipeline.DialectSQLite)[0]
	require.Equal(t, []int{3, 14}, []int{m.Line, m.Column})
	require.Equal(t, "${param.day} at line 3, column 14 of the query is inside quotes ('${param.day}'): params, ${now.*} and "+
		"${backfill.*} are sent as bind parameters, never pasted into the SQL text, so write ${param.day} instead of '${param.day}'",
		m.Message())
}

func TestStatement(t *testing.T) {
	t.Parallel()
	s := pipeline.Statement{Text: []string{" SELECT * FROM t WHERE a = ", " AND b = ", " ;\n"}, Args: []any{"x", int64(1)}}
	s = s.Trim().Wrap("SELECT * FROM (", ") AS q")
	require.Equal(t, "SELECT * FROM (SELECT * FROM t WHERE a = $1 AND b = $2) AS q",
		s.Render(func(i int) string { return "$" + string(rune('1'+i)) }))
	require.Equal(t, []any{"x", int64(1)}, s.Args)
	require.Equal(t, "SELECT 1", pipeline.NewStatement(" SELECT 1;").Trim().Render(nil))
}
