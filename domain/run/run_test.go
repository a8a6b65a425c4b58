package run_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/run"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

func params() run.NewParams {
	return run.NewParams{
		ID:          "0195a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b",
		Name:        "orders-mirror",
		Pool:        "default",
		Tenant:      "acme",
		Labels:      map[string]string{"team": "data", "env.tier": "prod"},
		TriggerKind: run.TriggerAPI,
		RunKey:      "2025-03-01",
		MaxAttempts: 3,
		CreatedAt:   t0,
	}
}

func TestNew(t *testing.T) {
	t.Parallel()
	r, err := run.New(params())
	require.NoError(t, err)
	require.Equal(t, run.Pending, r.Status())
	require.Equal(t, "orders-mirror", r.Name())
	require.Equal(t, "default", r.Pool())
	require.Equal(t, "acme", r.Tenant())
	require.Equal(t, "2025-03-01", r.RunKey())
	require.Equal(t, run.TriggerAPI, r.TriggerKind())
	require.Equal(t, 0, r.Attempt())
	require.Equal(t, 3, r.MaxAttempts())
	require.Equal(t, t0, r.CreatedAt())
	require.Empty(t, r.Owner())
	require.Nil(t, r.Error())
	require.Empty(t, r.Attempts())

	p := params()
	p.Queued = true
	p.Tenant, p.RunKey, p.Labels = "", "", nil
	r, err = run.New(p)
	require.NoError(t, err)
	require.Equal(t, run.Queued, r.Status())
	require.Empty(t, r.Tenant())
}

func TestNewCopiesLabels(t *testing.T) {
	t.Parallel()
	p := params()
	r, err := run.New(p)
	require.NoError(t, err)
	p.Labels["team"] = "changed"
	require.Equal(t, "data", r.Labels()["team"])
	got := r.Labels()
	got["team"] = "changed"
	require.Equal(t, "data", r.Labels()["team"])
}

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		edit func(*run.NewParams)
		want string
	}{
		"empty id":          {func(p *run.NewParams) { p.ID = "" }, "run id must not be empty"},
		"long id":           {func(p *run.NewParams) { p.ID = strings.Repeat("x", 129) }, "at most 128"},
		"id with space":     {func(p *run.NewParams) { p.ID = "a b" }, "must not contain spaces"},
		"bad name":          {func(p *run.NewParams) { p.Name = "Orders" }, `name "Orders" is not a valid name`},
		"empty name":        {func(p *run.NewParams) { p.Name = "" }, `name "" is not a valid name`},
		"empty pool":        {func(p *run.NewParams) { p.Pool = "" }, `pool "" is not a valid name`},
		"bad pool":          {func(p *run.NewParams) { p.Pool = "GPU" }, `pool "GPU" is not a valid name`},
		"bad tenant":        {func(p *run.NewParams) { p.Tenant = "-acme" }, `tenant "-acme" is not a valid name`},
		"bad label key":     {func(p *run.NewParams) { p.Labels = map[string]string{"Team": "x"} }, `label key "Team" is not a valid name`},
		"empty trigger":     {func(p *run.NewParams) { p.TriggerKind = "" }, `trigger_kind "" is not known`},
		"unknown trigger":   {func(p *run.NewParams) { p.TriggerKind = "cron" }, `trigger_kind "cron" is not known`},
		"long run key":      {func(p *run.NewParams) { p.RunKey = strings.Repeat("k", 256) }, "run_key is 256 bytes long: at most 255"},
		"control run key":   {func(p *run.NewParams) { p.RunKey = "a\nb" }, "run_key must not contain control characters"},
		"zero max attempts": {func(p *run.NewParams) { p.MaxAttempts = 0 }, "max_attempts must be at least 1 (got 0)"},
		"negative attempts": {func(p *run.NewParams) { p.MaxAttempts = -2 }, "max_attempts must be at least 1 (got -2)"},
		"no created_at":     {func(p *run.NewParams) { p.CreatedAt = time.Time{} }, "created_at must be set"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := params()
			tc.edit(&p)
			r, err := run.New(p)
			require.Nil(t, r)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

func TestNewReportsEveryProblem(t *testing.T) {
	t.Parallel()
	p := params()
	p.Name, p.Pool, p.MaxAttempts = "Bad", "", 0
	_, err := run.New(p)
	require.ErrorContains(t, err, `name "Bad"`)
	require.ErrorContains(t, err, `pool ""`)
	require.ErrorContains(t, err, "max_attempts")
}

func TestSnapshotRoundTrip(t *testing.T) {
	t.Parallel()
	r, err := run.New(params())
	require.NoError(t, err)
	require.NoError(t, r.Claim("m1", t0.Add(time.Second)))
	require.NoError(t, r.Finish(run.Failed, &run.Error{Code: run.CodePipelineError, Message: "sink sqlite: page 3: boom"}, t0.Add(2*time.Second)))

	s := r.Snapshot()
	back := run.Rehydrate(s)
	require.Equal(t, s, back.Snapshot())

	// The snapshot is a copy: editing it leaves the run alone, and so does editing what
	// Rehydrate was given.
	s.Labels["team"] = "x"
	s.Attempts[0].Outcome = run.OutcomeLost
	s.Error.Code = run.CodeTimeout
	require.Equal(t, "data", back.Labels()["team"])
	require.Equal(t, run.OutcomeFailed, back.Attempts()[0].Outcome)
	require.Equal(t, run.CodePipelineError, back.Error().Code)
	require.Equal(t, "data", r.Labels()["team"])
	require.Equal(t, run.CodePipelineError, r.Error().Code)
}
