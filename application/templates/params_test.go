package templates_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/pipeline"
)

func TestShowParam(t *testing.T) {
	t.Parallel()
	day := pipeline.Date{Year: 2026, Month: 1, Day: 2}
	require.Equal(t, templates.ParamView{Name: "day", Type: "date", Default: "2026-01-02", Min: "2026-01-01"},
		templates.ShowParam(pipeline.Param{Name: "day", Type: pipeline.ParamDate, Default: day, Min: pipeline.Date{Year: 2026, Month: 1, Day: 1}}))
	require.Equal(t, templates.ParamView{Name: "region", Type: "string", Enum: []any{"eu", "us"}, Pattern: "[a-z]+",
		MaxLength: pipeline.DefaultMaxLength}, templates.ShowParam(pipeline.Param{Name: "region", Type: pipeline.ParamString,
		Enum: []any{"eu", "us"}, Pattern: "[a-z]+"}))
	// A secret param shows neither its default nor the values it may take.
	require.Equal(t, templates.ParamView{Name: "pin", Type: "string", Secret: true, MaxLength: 8},
		templates.ShowParam(pipeline.Param{Name: "pin", Type: pipeline.ParamString, Secret: true, Default: "12345678",
			Enum: []any{"12345678"}, MaxLength: 8}))
}
