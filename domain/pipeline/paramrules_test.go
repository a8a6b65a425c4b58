package pipeline_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/pipeline"
)

func TestDateAndDatetimeParamsParseAndCompare(t *testing.T) {
	t.Parallel()
	decl, errs := pipeline.ParseParams(m(
		"day", m("type", "date", "min", "2026-01-01", "max", "2026-12-31", "default", "2026-06-01"),
		"at", m("type", "datetime", "min", "2026-01-01T00:00:00Z"),
	))
	require.Empty(t, errs)
	require.Equal(t, pipeline.Date{Year: 2026, Month: 6, Day: 1}, decl[0].Default)

	got, errs := pipeline.BindParams(decl, map[string]string{"day": "2026-02-28", "at": "2026-03-01T10:00:00.5+02:00"})
	require.Empty(t, errs)
	require.Equal(t, pipeline.Date{Year: 2026, Month: 2, Day: 28}, got["day"])
	at := got["at"].(time.Time)
	require.True(t, at.Equal(time.Date(2026, 3, 1, 8, 0, 0, 5e8, time.UTC)))
	require.Equal(t, "2026-02-28", pipeline.ParamText(got["day"]))
	require.Equal(t, "2026-03-01T10:00:00.5+02:00", pipeline.ParamText(at))
	require.Equal(t, pipeline.TypeString, pipeline.ParamScalarType(pipeline.ParamDate))

	// The bounds compare as dates and instants, not as text: 2025-12-31T23:00:00-02:00
	// is 2026-01-01T01:00Z, after the minimum.
	_, errs = pipeline.BindParams(decl, map[string]string{"day": "2025-12-31", "at": "2025-12-31T23:00:00-02:00"})
	require.Equal(t, pipeline.Errors{{Path: "params.day", Message: "must be at least 2026-01-01 (min)", Param: "day"}}, errs)
	_, errs = pipeline.BindParams(decl, map[string]string{"day": "2027-01-01", "at": "2025-12-31T23:00:00Z"})
	require.Equal(t, pipeline.Errors{
		{Path: "params.day", Message: "must be at most 2026-12-31 (max)", Param: "day"},
		{Path: "params.at", Message: "must be at least 2026-01-01T00:00:00Z (min)", Param: "at"},
	}, errs)

	for _, bad := range []string{"2026-02-30", "2026-2-1", "01/02/2026", "2026-01-01T00:00:00Z"} {
		_, errs = pipeline.BindParams(decl, map[string]string{"day": bad})
		require.Len(t, errs, 1, bad)
		require.Contains(t, errs[0].Message, "must be a date (YYYY-MM-DD)", bad)
	}
	for _, bad := range []string{"2026-01-01", "2026-01-01 10:00:00", "2026-01-01T10:00:00"} {
		_, errs = pipeline.BindParams(decl, map[string]string{"at": bad})
		require.Len(t, errs, 1, bad)
		require.Contains(t, errs[0].Message, "RFC 3339", bad)
	}
	require.Equal(t, -1, pipeline.Date{Year: 2026, Month: 1, Day: 31}.Compare(pipeline.Date{Year: 2026, Month: 2, Day: 1}))
}

func TestParamConstraints(t *testing.T) {
	t.Parallel()
	decl, errs := pipeline.ParseParams(m(
		"region", m("enum", l("eu", "us")),
		"day", m("pattern", `[0-9]{4}-[0-9]{2}-[0-9]{2}`),
		"limit", m("type", "int", "min", 1, "max", 100),
		"ratio", m("type", "float", "min", 0, "max", 1),
		"note", m("max_length", 5),
		"free", m(),
		"pin", m("secret", true, "enum", l("1234x", "5678y")),
	))
	require.Empty(t, errs)
	ok := map[string]string{"region": "eu", "day": "2026-01-02", "limit": "100", "ratio": "0.5", "note": "héllo", "pin": "1234x"}
	_, errs = pipeline.BindParams(decl, ok)
	require.Empty(t, errs)

	cases := []struct {
		name, value, want string
	}{
		{"region", "eu' OR '1'='1", `must be one of eu, us (enum), not "eu' OR '1'='1"`},
		{"day", "2026-01-02' --", `must match the whole of pattern "[0-9]{4}-[0-9]{2}-[0-9]{2}"`},
		{"day", "x2026-01-02", `must match the whole of pattern`},
		{"limit", "0", "must be at least 1 (min)"},
		{"limit", "101", "must be at most 100 (max)"},
		{"ratio", "1.5", "must be at most 1 (max)"},
		{"note", "toolong", "is 7 characters long; max_length allows 5"},
		{"free", string(make([]byte, 1025)), "is 1025 characters long; max_length allows 1024"},
		{"pin", "0000z", "must be one of 1234x, 5678y (enum)"}, // a secret value is not echoed
	}
	for _, tc := range cases {
		supplied := map[string]string{tc.name: tc.value}
		_, errs := pipeline.BindParams(decl, supplied)
		require.Len(t, errs, 1, tc.name)
		require.Equal(t, "params."+tc.name, errs[0].Path)
		require.Equal(t, tc.name, errs[0].Param)
		require.Contains(t, errs[0].Message, tc.want, tc.name)
		if tc.name == "pin" {
			require.NotContains(t, errs[0].Message, tc.value)
		}
		require.ErrorIs(t, errs, pipeline.ErrInvalidParams)
	}
}

func TestParamConstraintDeclarationsRefused(t *testing.T) {
	t.Parallel()
	cases := []struct {
		node *pipeline.Node
		want string
	}{
		{m("a", m("enum", l())), "params.a.enum: must be a non-empty list"},
		{m("a", m("type", "int", "enum", l(1, "2"))), "params.a.enum[1]: must be an int"},
		{m("a", m("pattern", "([a-z")), "params.a.pattern: is not an RE2 regular expression"},
		{m("a", m("type", "int", "pattern", "[0-9]+")), "params.a.pattern: applies to string params only"},
		{m("a", m("min", "a")), "params.a.min: applies to int, float, date and datetime params only"},
		{m("a", m("type", "date", "max", "tomorrow")), "params.a.max: must be a date (YYYY-MM-DD)"},
		{m("a", m("type", "int", "min", 5, "max", 1)), "params.a.max: must not be below min (5)"},
		{m("a", m("max_length", 0)), "params.a.max_length: must be between 1 and"},
		{m("a", m("type", "bool", "max_length", 3)), "params.a.max_length: applies to string params only"},
		{m("a", m("enum", l("x"), "default", "y")), `params.a.default: must be one of x (enum), not "y"`},
		{m("a", m("type", "int", "max", 3, "default", 4)), "params.a.default: must be at most 3 (max)"},
	}
	for _, tc := range cases {
		_, errs := pipeline.ParseParams(tc.node)
		require.Len(t, errs, 1, tc.want)
		require.Contains(t, errs[0].String(), tc.want)
	}
}
