package http_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/domain/schedule"
)

// fakeSchedules answers with a real Preview (it reads nothing stored) and canned views.
type fakeSchedules struct {
	*scheduling.Service
	created []scheduling.CreateRequest
	calls   []string
	ticks   []scheduling.Tick
	err     error
}

func sampleSchedule() *scheduling.View {
	return &scheduling.View{ID: "s-1", TemplateID: "orders", Cron: "30 2 * * *", Timezone: "America/New_York",
		MaxCatchupRuns: 1, Overlap: "skip", Params: map[string]string{"region": "eu", "token": "(secret)"},
		Labels: map[string]string{}, CreatedBy: "ann", CreatedAt: t0, NextTick: t0.Add(time.Hour)}
}

func (f *fakeSchedules) Create(_ context.Context, _ runs.Principal, r scheduling.CreateRequest) (*scheduling.View, error) {
	f.created = append(f.created, r)
	return sampleSchedule(), f.err
}

func (f *fakeSchedules) Get(_ context.Context, _ runs.Principal, id string) (*scheduling.View, error) {
	f.calls = append(f.calls, "get "+id)
	return sampleSchedule(), f.err
}

func (f *fakeSchedules) List(context.Context, runs.Principal) ([]*scheduling.View, error) {
	return []*scheduling.View{sampleSchedule()}, f.err
}

func (f *fakeSchedules) Pause(_ context.Context, _ runs.Principal, id string) (*scheduling.View, error) {
	f.calls = append(f.calls, "pause "+id)
	v := sampleSchedule()
	v.Paused = true
	return v, f.err
}

func (f *fakeSchedules) Resume(_ context.Context, _ runs.Principal, id string) (*scheduling.View, error) {
	f.calls = append(f.calls, "resume "+id)
	return sampleSchedule(), f.err
}

func (f *fakeSchedules) Delete(_ context.Context, _ runs.Principal, id string) error {
	f.calls = append(f.calls, "delete "+id)
	return f.err
}

func (f *fakeSchedules) Ticks(_ context.Context, _ runs.Principal, id string, before time.Time, limit int) ([]scheduling.Tick, error) {
	f.calls = append(f.calls, "ticks "+id+" "+before.Format(time.RFC3339)+" "+strconv.Itoa(limit))
	return f.ticks, f.err
}

func scheduleEnv(t *testing.T) (*env, *fakeSchedules) {
	f := &fakeSchedules{Service: scheduling.New(scheduling.Deps{}, scheduling.Config{})}
	return newEnv(t, func(_ *sluicehttp.Config, d *sluicehttp.Deps) { d.Schedules = f }), f
}

// The preview answers the instants of SPEC §9.1's table, in UTC and local time.
func TestSchedulePreview(t *testing.T) {
	t.Parallel()
	e, _ := scheduleEnv(t)
	q := url.Values{"cron": {"*/15 * * * *"}, "timezone": {"America/New_York"}, "from": {"2026-03-08T06:40:00Z"}, "count": {"3"}}
	rec := e.do(t, http.MethodGet, "/v1/schedules/preview?"+q.Encode(), viewerToken, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	var p struct {
		Cron, Timezone, From string
		Instants             []struct{ UTC, Local, Zone string }
	}
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
	require.Equal(t, "America/New_York", p.Timezone)
	require.Equal(t, "2026-03-08T06:40:00Z", p.From)
	require.Len(t, p.Instants, 3)
	for i, want := range [][3]string{
		{"2026-03-08T06:45:00Z", "2026-03-08T01:45:00-05:00", "EST"},
		{"2026-03-08T07:00:00Z", "2026-03-08T03:00:00-04:00", "EDT"},
		{"2026-03-08T07:15:00Z", "2026-03-08T03:15:00-04:00", "EDT"},
	} {
		require.Equal(t, want, [3]string{p.Instants[i].UTC, p.Instants[i].Local, p.Instants[i].Zone})
	}

	// The default zone is the server's (UTC here) and the default count 5.
	rec = e.do(t, http.MethodGet, "/v1/schedules/preview?cron=@daily&from=2026-01-01T00:00:00Z", viewerToken, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &p))
	require.Equal(t, "UTC", p.Timezone)
	require.Len(t, p.Instants, 5)
	require.Equal(t, "2026-01-02T00:00:00Z", p.Instants[0].UTC)
}

func TestSchedulePreviewRefusals(t *testing.T) {
	t.Parallel()
	e, _ := scheduleEnv(t)
	for name, tc := range map[string]struct {
		query string
		field string
		text  string
	}{
		"bad cron":        {"cron=61+*+*+*+*", "cron", "minute"},
		"missing cron":    {"timezone=UTC", "cron", "cron"},
		"unknown zone":    {"cron=@daily&timezone=Mars/Base", "timezone", "Mars/Base"},
		"local zone":      {"cron=@daily&timezone=Local", "timezone", "host"},
		"count too large": {"cron=@daily&count=1001", "", "count"},
		"count zero":      {"cron=@daily&count=0", "", "count"},
		"bad from":        {"cron=@daily&from=yesterday", "", "from"},
		"unknown param":   {"cron=@daily&tz=UTC", "", "tz"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rec := e.do(t, http.MethodGet, "/v1/schedules/preview?"+tc.query, viewerToken, nil)
			require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
			code, msg, details := errorOf(t, rec)
			require.Equal(t, "invalid_body", code)
			require.Contains(t, msg, tc.text)
			if tc.field != "" {
				require.Equal(t, tc.field, details["field"])
			}
		})
	}
	rec := e.do(t, http.MethodGet, "/v1/schedules/preview?cron=@daily", tenantToken, nil)
	require.Equal(t, http.StatusForbidden, rec.Code, "tenant principals do not read schedules")
}

func TestScheduleRoutes(t *testing.T) {
	t.Parallel()
	e, f := scheduleEnv(t)
	body := map[string]any{"cron": "30 2 * * *", "timezone": "America/New_York", "start_date": "2026-03-08",
		"catchup": true, "max_catchup_runs": 3, "overlap_policy": "queue", "params": map[string]any{"region": "eu", "n": 10, "on": true},
		"pool": "gpu", "labels": map[string]string{"team": "data"}}
	rec := e.do(t, http.MethodPost, "/v1/templates/orders/schedules", adminToken, body)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.Equal(t, "/v1/schedules/s-1", rec.Header().Get("Location"))
	require.Len(t, f.created, 1)
	got := f.created[0]
	require.Equal(t, "orders", got.TemplateID)
	require.Equal(t, 3, *got.MaxCatchupRuns)
	require.Equal(t, map[string]string{"region": "eu", "n": "10", "on": "true"}, got.Params)
	require.Equal(t, "queue", got.Overlap)
	require.True(t, got.Catchup)
	created := decode(t, rec)
	require.Equal(t, "(secret)", created["params"].(map[string]any)["token"])
	require.Nil(t, created["last_tick"])

	rec = e.do(t, http.MethodPost, "/v1/templates/orders/schedules", operatorToken, body)
	require.Equal(t, http.StatusForbidden, rec.Code, "creating schedules is for admins")
	rec = e.do(t, http.MethodPost, "/v1/templates/orders/schedules", adminToken, map[string]any{"cron": "@daily", "bogus": 1})
	require.Equal(t, http.StatusBadRequest, rec.Code, "unknown fields are refused")

	require.Equal(t, http.StatusOK, e.do(t, http.MethodGet, "/v1/schedules", viewerToken, nil).Code)
	require.Equal(t, http.StatusOK, e.do(t, http.MethodGet, "/v1/schedules/s-1", viewerToken, nil).Code)
	require.Equal(t, http.StatusForbidden, e.do(t, http.MethodPost, "/v1/schedules/s-1/pause", viewerToken, nil).Code)
	rec = e.do(t, http.MethodPost, "/v1/schedules/s-1/pause", operatorToken, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, true, decode(t, rec)["paused"])
	require.Equal(t, http.StatusOK, e.do(t, http.MethodPost, "/v1/schedules/s-1/resume", operatorToken, nil).Code)
	require.Equal(t, http.StatusForbidden, e.do(t, http.MethodDelete, "/v1/schedules/s-1", operatorToken, nil).Code)
	require.Equal(t, http.StatusNoContent, e.do(t, http.MethodDelete, "/v1/schedules/s-1", adminToken, nil).Code)
	require.Equal(t, []string{"get s-1", "pause s-1", "resume s-1", "delete s-1"}, f.calls)

	f.err = errNotFound()
	rec = e.do(t, http.MethodPost, "/v1/schedules/nope/pause", operatorToken, nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
}

func TestScheduleTicksPage(t *testing.T) {
	t.Parallel()
	e, f := scheduleEnv(t)
	at := time.Date(2026, 3, 8, 7, 0, 0, 0, time.UTC)
	f.ticks = []scheduling.Tick{
		{Instant: at, Status: schedule.OutcomeCreated, RunID: "r-1", CreatedAt: at},
		{Instant: at.Add(-time.Hour), Status: schedule.OutcomeSkipped, Reason: schedule.ReasonMissed,
			SummaryCount: 1500, SummaryFirst: at.Add(-2000 * time.Hour), CreatedAt: at},
	}
	rec := e.do(t, http.MethodGet, "/v1/schedules/s-1/ticks?limit=2&before=2026-03-09T00:00:00Z", viewerToken, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	page := decode(t, rec)
	require.Equal(t, "2026-03-08T06:00:00Z", page["next_before"], "a full page points at the next")
	require.Equal(t, []string{"ticks s-1 2026-03-09T00:00:00Z 2"}, f.calls)
	ticks := page["ticks"].([]any)
	require.Equal(t, "r-1", ticks[0].(map[string]any)["run_id"])
	require.Nil(t, ticks[0].(map[string]any)["reason"])
	require.Equal(t, float64(1500), ticks[1].(map[string]any)["summary_count"])
	require.Equal(t, schedule.ReasonMissed, ticks[1].(map[string]any)["reason"])

	doc := openAPIDoc(t, e)
	require.Equal(t, schemaProps(t, doc, "TicksResponse"), keys(page))
	require.Equal(t, schemaProps(t, doc, "Tick"), keys(ticks[1].(map[string]any)))
	one := decode(t, e.do(t, http.MethodGet, "/v1/schedules/s-1", viewerToken, nil))
	require.Equal(t, schemaProps(t, doc, "Schedule"), keys(one))
	list := decode(t, e.do(t, http.MethodGet, "/v1/schedules", viewerToken, nil))
	require.Equal(t, schemaProps(t, doc, "SchedulesResponse"), keys(list))
	preview := decode(t, e.do(t, http.MethodGet, "/v1/schedules/preview?cron=@hourly", viewerToken, nil))
	require.Equal(t, schemaProps(t, doc, "SchedulePreview"), keys(preview))
	require.Equal(t, schemaProps(t, doc, "PreviewInstant"), keys(preview["instants"].([]any)[0].(map[string]any)))

	for _, q := range []string{"limit=0", "limit=1001", "before=soon", "after=x"} {
		rec := e.do(t, http.MethodGet, "/v1/schedules/s-1/ticks?"+q, viewerToken, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
	}
}

// Every documented request field is accepted by the decoder.
func TestScheduleRequestSchemaMatchesTheDecoder(t *testing.T) {
	t.Parallel()
	e, f := scheduleEnv(t)
	samples := map[string]any{"cron": "@daily", "timezone": "UTC", "start_date": "2026-01-01", "catchup": false,
		"max_catchup_runs": 1, "overlap_policy": "skip", "params": map[string]any{}, "pool": "default", "labels": map[string]string{}}
	body := map[string]any{}
	for _, p := range schemaProps(t, openAPIDoc(t, e), "ScheduleRequest") {
		v, ok := samples[p]
		require.True(t, ok, "no sample for documented field %q", p)
		body[p] = v
	}
	require.Len(t, body, len(samples))
	rec := e.do(t, http.MethodPost, "/v1/templates/orders/schedules", adminToken, body)
	require.Equal(t, http.StatusCreated, rec.Code, rec.Body.String())
	require.Len(t, f.created, 1)
}

// Without a schedule service the routes answer not_found.
func TestSchedulesNotServed(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do(t, http.MethodGet, "/v1/schedules", viewerToken, nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	code, _, _ := errorOf(t, rec)
	require.Equal(t, "not_found", code)
}

type fakeBackfills struct {
	got     []scheduling.BackfillRequest
	propose bool
}

func (f *fakeBackfills) Backfill(_ context.Context, _ runs.Principal, r scheduling.BackfillRequest) (*scheduling.Backfill, error) {
	f.got = append(f.got, r)
	if f.propose {
		return &scheduling.Backfill{ID: "bf-1", ChangeRequestID: "cr-1"}, nil
	}
	start := r.From
	return &scheduling.Backfill{ID: "bf-1", Runs: []scheduling.BackfillRun{{RunID: "r-1", Start: start, End: start.Add(24 * time.Hour)}}}, nil
}

func TestBackfillRoute(t *testing.T) {
	t.Parallel()
	f := &fakeBackfills{}
	e := newEnv(t, func(_ *sluicehttp.Config, d *sluicehttp.Deps) { d.Backfills = f })
	doc := openAPIDoc(t, e)
	samples := map[string]any{"template": "orders", "config": nil, "params": map[string]any{"n": 2}, "from": "2026-03-01T00:00:00Z",
		"to": "2026-03-02T00:00:00+01:00", "window": "P1D", "timezone": "Europe/Berlin", "pool": "gpu", "max_active": 2}
	body := map[string]any{}
	for _, p := range schemaProps(t, doc, "BackfillRequest") {
		v, ok := samples[p]
		require.True(t, ok, "no sample for documented field %q", p)
		body[p] = v
	}
	require.Len(t, body, len(samples))
	rec := e.do(t, http.MethodPost, "/v1/backfill", operatorToken, body)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	got := f.got[0]
	require.Equal(t, "orders", got.Template)
	require.Nil(t, got.Config)
	require.Equal(t, map[string]string{"n": "2"}, got.Params)
	require.True(t, time.Date(2026, 3, 1, 23, 0, 0, 0, time.UTC).Equal(got.To))
	require.Equal(t, 2, *got.MaxActive)
	answer := decode(t, rec)
	require.Equal(t, []string{"backfill_id", "runs"}, keys(answer))
	require.Subset(t, schemaProps(t, doc, "BackfillResponse"), keys(answer))
	require.Equal(t, schemaProps(t, doc, "BackfillRun"), keys(answer["runs"].([]any)[0].(map[string]any)))
	require.Equal(t, "2026-03-02T00:00:00Z", answer["runs"].([]any)[0].(map[string]any)["end"])

	rec = e.do(t, http.MethodPost, "/v1/backfill", operatorToken, map[string]any{"config": map[string]any{"version": 1}, "from": "x"})
	require.Equal(t, http.StatusBadRequest, rec.Code)
	_, msg, _ := errorOf(t, rec)
	require.Contains(t, msg, `"from"`)
	rec = e.do(t, http.MethodPost, "/v1/backfill", operatorToken, map[string]any{"config": 7})
	require.Equal(t, http.StatusBadRequest, rec.Code, "a config must be text or an object")
	require.Equal(t, http.StatusForbidden, e.do(t, http.MethodPost, "/v1/backfill", viewerToken, body).Code)
	require.Len(t, f.got, 1, "refused requests reach no service")
	require.Equal(t, http.StatusNotFound, newEnv(t).do(t, http.MethodPost, "/v1/backfill", operatorToken, body).Code)

	// Under --require-approval run the answer is the one change request (SPEC §9.5).
	f.propose = true
	rec = e.do(t, http.MethodPost, "/v1/backfill", operatorToken, body)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	answer = decode(t, rec)
	require.Equal(t, map[string]any{"backfill_id": "bf-1", "change_request_id": "cr-1", "status": "proposed"}, answer)
	require.Subset(t, schemaProps(t, doc, "BackfillResponse"), keys(answer))
}
