package scheduling_test

import (
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/vault"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
)

const typedParams = `params:
  region: { type: string, required: true }
  days: { type: int, default: 1 }
  token: { type: string, secret: true }
`

func sqliteWorld(t *testing.T, sealer ...runs.Sealer) *world {
	t.Helper()
	return newWorld(t, "sqlite:"+filepath.Join(t.TempDir(), "history.db"), sealer...)
}

func intp(n int) *int { return &n }

// Every refused setting names its field; params go through the template's typed params.
func TestCreateRefusals(t *testing.T) {
	t.Parallel()
	w := sqliteWorld(t)
	w.clock.set(time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC))
	w.template(t, "orders", typedParams)
	ok := func() scheduling.CreateRequest {
		return scheduling.CreateRequest{TemplateID: "orders", Cron: "0 3 * * *", Params: map[string]string{"region": "eu"}}
	}
	for name, tc := range map[string]struct {
		mod   func(*scheduling.CreateRequest)
		field string
		text  string
	}{
		"empty cron":         {func(r *scheduling.CreateRequest) { r.Cron = "" }, "cron", ""},
		"six fields":         {func(r *scheduling.CreateRequest) { r.Cron = "0 0 3 * * *" }, "cron", ""},
		"unknown macro":      {func(r *scheduling.CreateRequest) { r.Cron = "@reboot" }, "cron", ""},
		"zero step":          {func(r *scheduling.CreateRequest) { r.Cron = "*/0 * * * *" }, "cron", ""},
		"unknown zone":       {func(r *scheduling.CreateRequest) { r.Timezone = "Europe/Atlantis" }, "timezone", "Europe/Atlantis"},
		"host zone":          {func(r *scheduling.CreateRequest) { r.Timezone = "Local" }, "timezone", "host"},
		"bad start date":     {func(r *scheduling.CreateRequest) { r.StartDate = "2026-13-01" }, "start_date", "2026-13-01"},
		"start date as time": {func(r *scheduling.CreateRequest) { r.StartDate = "2026-06-01T00:00:00Z" }, "start_date", ""},
		"catch-up zero":      {func(r *scheduling.CreateRequest) { r.MaxCatchupRuns = intp(0) }, "max_catchup_runs", "1..1000"},
		"catch-up too many":  {func(r *scheduling.CreateRequest) { r.MaxCatchupRuns = intp(1001) }, "max_catchup_runs", "1..1000"},
		"overlap":            {func(r *scheduling.CreateRequest) { r.Overlap = "parallel" }, "overlap_policy", "parallel"},
		"pool":               {func(r *scheduling.CreateRequest) { r.Pool = "Not A Pool" }, "pool", ""},
		"label key":          {func(r *scheduling.CreateRequest) { r.Labels = map[string]string{"bad key": "x"} }, "labels", ""},
	} {
		t.Run(name, func(t *testing.T) {
			req := ok()
			tc.mod(&req)
			_, err := w.svc.Create(w.ctx, admin, req)
			var ie *runs.InvalidRequestError
			require.ErrorAs(t, err, &ie)
			require.Equal(t, tc.field, ie.Field)
			require.Contains(t, ie.Error(), tc.text)
		})
	}
	for name, tc := range map[string]struct {
		params map[string]string
		path   string
	}{
		"missing required": {map[string]string{}, "params.region"},
		"wrong type":       {map[string]string{"region": "eu", "days": "many"}, "params.days"},
		"undeclared":       {map[string]string{"region": "eu", "colour": "red"}, "params.colour"},
	} {
		t.Run(name, func(t *testing.T) {
			req := ok()
			req.Params = tc.params
			_, err := w.svc.Create(w.ctx, admin, req)
			var errs pipeline.Errors
			require.ErrorAs(t, err, &errs)
			require.Equal(t, tc.path, errs[0].Path)
		})
	}
	t.Run("secret params need a vault key", func(t *testing.T) {
		req := ok()
		req.Params["token"] = "a-long-enough-secret"
		_, err := w.svc.Create(w.ctx, admin, req)
		require.ErrorIs(t, err, runs.ErrVaultKeyRequired)
	})
	t.Run("unknown template", func(t *testing.T) {
		req := ok()
		req.TemplateID = "nope"
		_, err := w.svc.Create(w.ctx, admin, req)
		require.ErrorIs(t, err, run.ErrNotFound)
	})
	t.Run("roles", func(t *testing.T) {
		_, err := w.svc.Create(w.ctx, runs.Principal{Name: "otto", Role: runs.Operator}, ok())
		require.ErrorIs(t, err, runs.ErrForbidden)
		_, err = w.svc.Create(w.ctx, runs.Principal{Name: "acme", Role: runs.Admin, Tenant: "acme"}, ok())
		require.ErrorIs(t, err, runs.ErrForbidden)
		_, err = w.svc.List(w.ctx, runs.Principal{Name: "nobody"})
		require.ErrorIs(t, err, runs.ErrForbidden)
		_, err = w.svc.Pause(w.ctx, runs.Principal{Name: "vic", Role: runs.Viewer}, "x")
		require.ErrorIs(t, err, runs.ErrForbidden)
		require.ErrorIs(t, w.svc.Delete(w.ctx, runs.Principal{Name: "otto", Role: runs.Operator}, "x"), runs.ErrForbidden)
		_, err = w.svc.Ticks(w.ctx, admin, "x", time.Time{}, 0)
		require.ErrorIs(t, err, run.ErrNotFound)
	})
	list, err := w.svc.List(w.ctx, admin)
	require.NoError(t, err)
	require.Empty(t, list, "no refused schedule was stored")
}

// newVault is a vault with a fresh key.
func newVault(t *testing.T) *vault.Vault {
	t.Helper()
	key, err := vault.GenerateKey()
	require.NoError(t, err)
	raw, err := vault.ParseKey(key)
	require.NoError(t, err)
	v, err := vault.New(raw)
	require.NoError(t, err)
	return v
}

// Defaults of SPEC §9.2, the view, and secret params sealed and masked.
func TestCreateDefaultsAndSecrets(t *testing.T) {
	t.Parallel()
	w := sqliteWorld(t, newVault(t))
	w.clock.set(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	w.template(t, "orders", typedParams)
	secretValue := "s3cret-token-value"
	view, err := w.svc.Create(w.ctx, admin, scheduling.CreateRequest{TemplateID: "orders", Cron: "@daily",
		Params: map[string]string{"region": "eu", "token": secretValue}})
	require.NoError(t, err)
	require.Equal(t, "UTC", view.Timezone, "the server's --timezone")
	require.False(t, view.Catchup)
	require.Equal(t, 1, view.MaxCatchupRuns)
	require.Equal(t, "skip", view.Overlap)
	require.Equal(t, map[string]string{"region": "eu", "token": "(secret)"}, view.Params)
	require.Equal(t, time.Date(2026, 6, 2, 0, 0, 0, 0, time.UTC), view.NextTick.UTC())

	stored, err := w.st.GetSchedule(w.ctx, view.ID)
	require.NoError(t, err)
	require.True(t, stored.ParamsSealed)
	plain, err := base64.StdEncoding.DecodeString(stored.Params)
	require.NoError(t, err)
	require.False(t, strings.Contains(string(plain), secretValue), "the stored params are sealed")
	require.NotContains(t, stored.Params, "region")

	got, err := w.svc.Get(w.ctx, runs.Principal{Name: "vic", Role: runs.Viewer}, view.ID)
	require.NoError(t, err)
	require.Equal(t, "(secret)", got.Params["token"])
	require.Equal(t, "eu", got.Params["region"])

	// The tick's run gets the real value (sealed in the run, never in clear).
	w.clock.set(time.Date(2026, 6, 2, 0, 0, 5, 0, time.UTC))
	_, err = w.svc.Pass(w.ctx, w.epoch)
	require.NoError(t, err)
	ticks, err := w.st.ListTicks(w.ctx, view.ID, time.Time{}, 10)
	require.NoError(t, err)
	require.Len(t, ticks, 1)
	rec, err := w.st.Get(w.ctx, ticks[0].RunID)
	require.NoError(t, err)
	require.Equal(t, "schedule:"+view.ID+":2026-06-02T00:00:00Z", rec.RunKey)
	require.Equal(t, "2026-06-02", rec.RunDate)
	require.True(t, rec.ConfigSealed)
	require.NotContains(t, rec.Config, secretValue)

	require.NoError(t, w.svc.Delete(w.ctx, admin, view.ID))
	_, err = w.svc.Get(w.ctx, admin, view.ID)
	require.ErrorIs(t, err, run.ErrNotFound)
}

// A server that cannot open a schedule's sealed params records each due tick skipped
// with the reason, instead of failing the pass on it again and again.
func TestSealedParamsWithoutTheKey(t *testing.T) {
	t.Parallel()
	w := sqliteWorld(t, newVault(t))
	w.clock.set(time.Date(2026, 6, 1, 12, 0, 0, 0, time.UTC))
	w.template(t, "orders", typedParams)
	view, err := w.svc.Create(w.ctx, admin, scheduling.CreateRequest{TemplateID: "orders", Cron: "@daily",
		Params: map[string]string{"region": "eu", "token": "s3cret-token-value"}})
	require.NoError(t, err)

	keyless := scheduling.New(scheduling.Deps{Store: w.st, Templates: w.tpl, Clock: w.clock.Now}, scheduling.Config{})
	w.clock.set(time.Date(2026, 6, 2, 0, 0, 1, 0, time.UTC))
	_, err = keyless.Pass(w.ctx, w.epoch)
	require.NoError(t, err)
	got := w.ticks(t, view.ID)
	require.Len(t, got, 1)
	require.Equal(t, "skipped", string(got[0].status))
	require.Contains(t, got[0].reason, "--vault-key")
	require.NotContains(t, got[0].reason, "s3cret")
}
