package pipeline_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/pipeline"
)

func TestParseParams(t *testing.T) {
	t.Parallel()
	decl, errs := pipeline.ParseParams(m(
		"region", m("type", "string", "default", "eu", "description", "where"),
		"limit", m("type", "int", "required", true),
		"ratio", m("type", "float", "default", 1),
		"dry_run", m("type", "bool", "default", false),
		"token", m("secret", true, "required", true),
		"plain", m(),
	))
	require.Empty(t, errs)
	require.Equal(t, []pipeline.Param{
		{Name: "region", Type: pipeline.ParamString, Default: "eu", Description: "where"},
		{Name: "limit", Type: pipeline.ParamInt, Required: true},
		{Name: "ratio", Type: pipeline.ParamFloat, Default: float64(1)},
		{Name: "dry_run", Type: pipeline.ParamBool, Default: false},
		{Name: "token", Type: pipeline.ParamString, Secret: true, Required: true},
		{Name: "plain", Type: pipeline.ParamString},
	}, decl)

	decl, errs = pipeline.ParseParams(nil)
	require.Empty(t, errs)
	require.Empty(t, decl)
	decl, errs = pipeline.ParseParams(val(nil))
	require.Empty(t, errs)
	require.Empty(t, decl)
}

func TestParseParamsRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		node *pipeline.Node
		want string
	}{
		{l("a"), "params: must be a map of param name"},
		{m("Region", m()), `params.Region: param name "Region" is not a valid name`},
		{m("a", "string"), "params.a: must be a map, not a string"},
		{m("a", m("type", "decimal")), `params.a.type: must be one of string, int, float, bool, date, datetime, not "decimal"`},
		{m("a", m("kind", "int")), "params.a.kind: unknown key (known keys: type, required, default, secret, description, enum, pattern, min, max, max_length)"},
		{m("a", m("type", "int", "default", "5")), "params.a.default: must be an int, like the param's type"},
		{m("a", m("type", "int", "default", 1.5)), "params.a.default: must be an int"},
		{m("a", m("type", "float", "default", "x")), "params.a.default: must be a float"},
		{m("a", m("type", "bool", "default", "true")), "params.a.default: must be true or false"},
		{m("a", m("default", 3)), "params.a.default: must be a string"},
		{m("a", m("default", m())), "params.a.default: must be a string"},
		{m("a", m("required", true, "default", "x")), "params.a.default: a required param takes no default"},
		{m("a", m("required", "maybe")), "params.a.required: must be true or false"},
		{m("a", m("secret", 1)), "params.a.secret: must be true or false"},
		{m("a", m("description", 1)), "params.a.description: must be a string"},
	}
	for _, tc := range cases {
		_, errs := pipeline.ParseParams(tc.node)
		require.Len(t, errs, 1, tc.want)
		require.Contains(t, errs[0].String(), tc.want)
	}
}

func TestBindParams(t *testing.T) {
	t.Parallel()
	decl := []pipeline.Param{
		{Name: "region", Type: pipeline.ParamString, Default: "eu"},
		{Name: "limit", Type: pipeline.ParamInt, Required: true},
		{Name: "ratio", Type: pipeline.ParamFloat},
		{Name: "dry_run", Type: pipeline.ParamBool, Default: false},
		{Name: "note", Type: pipeline.ParamString},
	}
	got, errs := pipeline.BindParams(decl, map[string]string{"limit": "10", "ratio": "0.5", "dry_run": "true"})
	require.Empty(t, errs)
	require.Equal(t, map[string]any{"region": "eu", "limit": int64(10), "ratio": 0.5, "dry_run": true}, got)

	// A supplied value is literal text, even when it looks like a directive.
	got, errs = pipeline.BindParams(decl, map[string]string{"limit": "1", "region": "${env:HOME}"})
	require.Empty(t, errs)
	require.Equal(t, "${env:HOME}", got["region"])
}

func TestBindParamsRefusals(t *testing.T) {
	t.Parallel()
	decl := []pipeline.Param{
		{Name: "limit", Type: pipeline.ParamInt, Required: true},
		{Name: "region", Type: pipeline.ParamString, Required: true},
		{Name: "ratio", Type: pipeline.ParamFloat},
		{Name: "flag", Type: pipeline.ParamBool},
		{Name: "pin", Type: pipeline.ParamInt, Secret: true},
	}
	_, errs := pipeline.BindParams(decl, map[string]string{
		"limit": "ten", "ratio": "NaN", "flag": "yes", "pin": "12x4", "zone": "a", "colour": "b",
	})
	require.Equal(t, pipeline.Errors{
		{Path: "params.colour", Message: "unknown param (declared: limit, region, ratio, flag, pin)", Param: "colour"},
		{Path: "params.zone", Message: "unknown param (declared: limit, region, ratio, flag, pin)", Param: "zone"},
		{Path: "params.limit", Message: `must be an int, not "ten"`, Param: "limit"},
		{Path: "params.region", Message: "required", Param: "region"},
		{Path: "params.ratio", Message: `must be a float, not "NaN"`, Param: "ratio"},
		{Path: "params.flag", Message: `must be true or false, not "yes"`, Param: "flag"},
		{Path: "params.pin", Message: "must be an int", Param: "pin"}, // a secret value is never echoed
	}, errs)
	require.ErrorIs(t, errs, pipeline.ErrInvalidParams)
	require.ErrorIs(t, errs, pipeline.ErrInvalidConfig)

	_, errs = pipeline.BindParams(nil, map[string]string{"region": "eu"})
	require.Equal(t, pipeline.Errors{{Path: "params.region", Message: "unknown param: the config declares no params", Param: "region"}}, errs)
}

func TestParamText(t *testing.T) {
	t.Parallel()
	require.Equal(t, "eu", pipeline.ParamText("eu"))
	require.Equal(t, "42", pipeline.ParamText(int64(42)))
	require.Equal(t, "0.25", pipeline.ParamText(0.25))
	require.Equal(t, "true", pipeline.ParamText(true))
	require.Equal(t, pipeline.TypeInt, pipeline.ParamScalarType(pipeline.ParamInt))
	require.Equal(t, pipeline.TypeFloat, pipeline.ParamScalarType(pipeline.ParamFloat))
	require.Equal(t, pipeline.TypeBool, pipeline.ParamScalarType(pipeline.ParamBool))
	require.Equal(t, pipeline.TypeString, pipeline.ParamScalarType(pipeline.ParamString))
}
