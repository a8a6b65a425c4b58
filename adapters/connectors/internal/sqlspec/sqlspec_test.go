package sqlspec_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlspec"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

func TestWriteOf(t *testing.T) {
	t.Parallel()
	w, err := sqlspec.WriteOf(map[string]any{"write_mode": "upsert", "key": []any{"id"}, "create_table": true})
	require.Nil(t, err)
	require.Equal(t, sqlspec.Write{Mode: pipeline.Upsert, Key: []string{"id"}, Create: true}, w)

	w, err = sqlspec.WriteOf(map[string]any{})
	require.Nil(t, err)
	require.Equal(t, pipeline.Append, w.Mode)
}

func TestWriteOfRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		cfg  map[string]any
		key  string
		msg  string
	}{
		{"unknown mode", map[string]any{"write_mode": "merge"}, "write_mode", `unknown write_mode "merge"; use append, upsert, delete or overwrite`},
		{"empty key item", map[string]any{"key": []any{"id", ""}}, "key", "item 1 is empty"},
		{"upsert without key", map[string]any{"write_mode": "upsert"}, "key", "write_mode upsert needs key: the columns that identify a row, e.g. key: [id]"},
		{"delete without key", map[string]any{"write_mode": "delete"}, "key", "write_mode delete needs key: the columns that identify a row, e.g. key: [id]"},
		{"create_table not a bool", map[string]any{"create_table": "yes"}, "create_table", ""},
		{"key not a list", map[string]any{"key": 5}, "key", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := sqlspec.WriteOf(tc.cfg)
			require.NotNil(t, err)
			require.Equal(t, tc.key, err.Key)
			if tc.msg != "" {
				require.Equal(t, tc.msg, err.Msg)
			}
			require.Equal(t, `config key "`+tc.key+`": `+err.Msg, err.Error())
		})
	}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	badURL := func(string) error { return errors.New("must be a db:// URL") }
	goodURL := func(string) error { return nil }
	keyMissing := func(map[string]any) *sqlspec.OptionError {
		return &sqlspec.OptionError{Key: pipeline.KeyKey, Msg: "needs key"}
	}
	badTable := func(map[string]any) *sqlspec.OptionError { return &sqlspec.OptionError{Key: "table_name", Msg: "bad"} }
	none := func(map[string]any) *sqlspec.OptionError { return nil }

	errs := sqlspec.Check(pipeline.RoleSource, map[string]any{"connection_url": "x"}, "source", badURL, badTable)
	require.Equal(t, pipeline.Errors{{Path: "source.connection_url", Message: "must be a db:// URL"}}, errs)

	errs = sqlspec.Check(pipeline.RoleSink, map[string]any{"connection_url": "x"}, "sink", goodURL, badTable)
	require.Equal(t, pipeline.Errors{{Path: "sink.table_name", Message: "bad"}}, errs)

	// A missing key is CheckWriteMode's to report, once.
	errs = sqlspec.Check(pipeline.RoleSink, map[string]any{"write_mode": "upsert"}, "sink", goodURL, keyMissing)
	require.Len(t, errs, 1)
	require.Equal(t, "sink.key", errs[0].Path)

	require.Empty(t, sqlspec.Check(pipeline.RoleSink, map[string]any{"connection_url": "x"}, "sink", goodURL, none))
}

func TestFields(t *testing.T) {
	t.Parallel()
	extra := pipeline.FieldSpec{Name: "extra", Type: pipeline.FieldString, Role: pipeline.RoleSink}
	f := sqlspec.Fields(sqlspec.Descriptions{URL: "u", Table: "t", Watermark: "w"}, extra)
	var names []string
	for _, x := range f {
		names = append(names, x.Name)
	}
	require.Equal(t, "connection_url", names[0])
	require.Equal(t, "u", f[0].Description)
	require.Subset(t, names, []string{"query", "table_name", "extra", "watermark_table", "write_mode", "key", "create_table"})
	ti := indexOf(names, "table_name")
	require.Equal(t, "extra", names[ti+1])
	require.Equal(t, "watermark_table", names[ti+2])
}

func indexOf(list []string, s string) int {
	for i, x := range list {
		if x == s {
			return i
		}
	}
	return -1
}

func TestQuery(t *testing.T) {
	t.Parallel()
	q, err := sqlspec.Query(map[string]any{"query": "  SELECT 1;; \n"})
	require.NoError(t, err)
	require.Equal(t, pipeline.NewStatement("SELECT 1"), q)
	// A resolved query keeps its bind parameters apart; trimming touches only the text.
	q, err = sqlspec.Query(map[string]any{"query": pipeline.Statement{Text: []string{" SELECT * FROM t WHERE d = ", ";\n"}, Args: []any{"x"}}})
	require.NoError(t, err)
	require.Equal(t, pipeline.Statement{Text: []string{"SELECT * FROM t WHERE d = ", ""}, Args: []any{"x"}}, q)
	_, err = sqlspec.Query(map[string]any{"query": " ; "})
	require.EqualError(t, err, `config key "query" is required`)
	_, err = sqlspec.Query(map[string]any{"query": 3})
	require.Error(t, err)
}

func TestIncrementalQuery(t *testing.T) {
	t.Parallel()
	require.Equal(t, "SELECT * FROM (\nSELECT a FROM t -- c\n) AS q WHERE q.`a` > ? ORDER BY q.`a`",
		sqlspec.Text(sqlspec.IncrementalQuery(pipeline.NewStatement("SELECT a FROM t -- c"), "`a`", "?")))
	require.Equal(t, "SELECT * FROM (\nSELECT a FROM t\n) AS q ORDER BY q.\"a\"",
		sqlspec.Text(sqlspec.IncrementalQuery(pipeline.NewStatement("SELECT a FROM t"), `"a"`, "")))
}

func TestCursorAt(t *testing.T) {
	t.Parallel()
	i, err := sqlspec.CursorAt([]string{"id", "at", "at"}, "at")
	require.NoError(t, err)
	require.Equal(t, 1, i)
	_, err = sqlspec.CursorAt([]string{"id", "name"}, "at")
	require.EqualError(t, err, `the cursor column "at" is not a column of the query (columns: id, name)`)
}

func TestScrubber(t *testing.T) {
	t.Parallel()
	base := errors.New("dial s3cret@host failed")
	err := sqlspec.NewScrubber("", "s3cret").Wrap(base)
	require.EqualError(t, err, "dial REDACTED@host failed")
	require.ErrorIs(t, err, base)

	clean := errors.New("no secret here")
	require.Same(t, clean, sqlspec.NewScrubber("s3cret").Wrap(clean))
	require.Same(t, base, sqlspec.NewScrubber().Wrap(base))
	require.NoError(t, sqlspec.NewScrubber("x").Wrap(nil))
	var nilScrubber *sqlspec.Scrubber
	require.Same(t, base, nilScrubber.Wrap(base))
}

func TestTable(t *testing.T) {
	t.Parallel()
	parse := func(s string) (string, error) {
		if s == "bad" {
			return "", errors.New("must be table or schema.table")
		}
		return "<" + s + ">", nil
	}
	got, err := sqlspec.Table(map[string]any{"table_name": "t"}, "table_name", "", parse)
	require.Nil(t, err)
	require.Equal(t, "<t>", got)
	got, err = sqlspec.Table(map[string]any{}, "watermark_table", "wm", parse)
	require.Nil(t, err)
	require.Equal(t, "<wm>", got)
	_, err = sqlspec.Table(map[string]any{"table_name": "bad"}, "table_name", "", parse)
	require.Equal(t, &sqlspec.OptionError{Key: "table_name", Msg: "must be table or schema.table"}, err)
	_, err = sqlspec.Table(map[string]any{"table_name": 4}, "table_name", "", parse)
	require.NotNil(t, err)
	require.Equal(t, "table_name", err.Key)
}

func TestPageOf(t *testing.T) {
	t.Parallel()
	page := &execute.Page{Columns: []string{"id"}}
	ended := false
	p, err := sqlspec.PageOf(context.Background(), "db", page, nil, &ended, nil)
	require.NoError(t, err)
	require.Same(t, page, p)
	require.False(t, ended)

	_, err = sqlspec.PageOf(context.Background(), "db", nil, io.EOF, &ended, nil)
	require.ErrorIs(t, err, io.EOF)
	require.True(t, ended)

	ended = false
	_, err = sqlspec.PageOf(context.Background(), "db", nil, errors.New("read pw1 failed"), &ended, sqlspec.NewScrubber("pw1"))
	require.EqualError(t, err, "db: read REDACTED failed")
	require.True(t, ended)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = sqlspec.PageOf(ctx, "db", nil, errors.New("conn closed"), &ended, nil)
	require.EqualError(t, err, "db: context canceled")
	require.ErrorIs(t, err, context.Canceled)
}

func TestJSONNumbers(t *testing.T) {
	t.Parallel()
	v := map[string]any{"i": json.Number("12"), "f": json.Number("1.5"),
		"list": []any{json.Number("-3"), "x", nil}}
	require.Equal(t, map[string]any{"i": int64(12), "f": 1.5, "list": []any{int64(-3), "x", nil}},
		sqlspec.JSONNumbers(v))
	require.Equal(t, "s", sqlspec.JSONNumbers("s"))
}

func TestQualified(t *testing.T) {
	t.Parallel()
	q := func(s string) string { return "[" + s + "]" }
	require.Equal(t, "s.t", sqlspec.Qualified("s", "t", nil))
	require.Equal(t, "t", sqlspec.Qualified("", "t", nil))
	require.Equal(t, "[s].[t]", sqlspec.Qualified("s", "t", q))
	require.Equal(t, "[t]", sqlspec.Qualified("", "t", q))
}

func TestSpec(t *testing.T) {
	t.Parallel()
	check := func(pipeline.Role, map[string]any, string) pipeline.Errors { return nil }
	s := sqlspec.Spec("db", "A database.", []pipeline.FieldSpec{{Name: "x"}}, check)
	require.Equal(t, "db", s.Type)
	require.Equal(t, pipeline.RoleBoth, s.Roles)
	require.Equal(t, "A database.", s.Description)
	require.True(t, s.ExactlyOnce)
	require.Len(t, s.Fields, 1)
	require.NotNil(t, s.Check)
}
