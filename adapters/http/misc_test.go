package http_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/pipeline"
)

type fakeHealth struct{ r sluicehttp.Readiness }

func (f fakeHealth) Ready(context.Context) sluicehttp.Readiness { return f.r }

func TestReadyz(t *testing.T) {
	t.Parallel()
	self := sluicehttp.Member{InstanceID: "i-1", Listen: "127.0.0.1:8080", Pools: []string{"default"}, InFlight: 2, MaxConcurrent: 4}
	cases := map[string]struct {
		r      sluicehttp.Readiness
		status int
		word   string
	}{
		"ready":    {sluicehttp.Readiness{HistoryOK: true, QueueOK: true, Cluster: sluicehttp.Cluster{Instances: 1, Pools: []string{"default"}, Members: []sluicehttp.Member{self}}}, 200, "ok"},
		"queue":    {sluicehttp.Readiness{HistoryOK: true, QueueOK: false}, 200, "ok"},
		"draining": {sluicehttp.Readiness{HistoryOK: true, QueueOK: true, Draining: true}, 503, "draining"},
		"history":  {sluicehttp.Readiness{HistoryOK: false, QueueOK: true}, 503, "history_unavailable"},
		"worded":   {sluicehttp.Readiness{Status: "degraded", HistoryOK: true}, 200, "degraded"},
	}
	for name, tc := range cases {
		e := newEnv(t, func(_ *sluicehttp.Config, d *sluicehttp.Deps) { d.Health = fakeHealth{tc.r} })
		rec := e.do(t, http.MethodGet, "/readyz", "", nil)
		require.Equal(t, tc.status, rec.Code, name)
		m := decode(t, rec)
		require.Equal(t, tc.word, m["status"], name)
		require.Equal(t, tc.r.Draining, m["draining"], name)
		require.Equal(t, tc.r.QueueOK, m["queue_ok"], name)
	}
	e := newEnv(t, func(_ *sluicehttp.Config, d *sluicehttp.Deps) { d.Health = fakeHealth{cases["ready"].r} })
	require.JSONEq(t, `{"status": "ok", "history_ok": true, "queue_ok": true, "draining": false,
		"cluster": {"enabled": false, "instances": 1, "pools": ["default"],
		"members": [{"instance_id": "i-1", "listen": "127.0.0.1:8080", "pools": ["default"], "in_flight": 2, "max_concurrent": 4}]}}`,
		e.do(t, http.MethodGet, "/readyz", "", nil).Body.String())
	e = newEnv(t, func(_ *sluicehttp.Config, d *sluicehttp.Deps) {
		d.Health = fakeHealth{sluicehttp.Readiness{HistoryOK: true, Cluster: sluicehttp.Cluster{Enabled: true, Instances: 3}}}
	})
	m := decode(t, e.do(t, http.MethodGet, "/readyz", "", nil))
	require.Nil(t, m["cluster"].(map[string]any)["pools"], "a member without pool support shows null")
}

func TestLivezAndMetrics(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	require.JSONEq(t, `{"status": "ok"}`, e.do(t, http.MethodGet, "/livez", "", nil).Body.String())
	rec := e.do(t, http.MethodGet, "/metrics", "", nil)
	require.Equal(t, http.StatusNotFound, rec.Code, "no metrics handler wired")
	e = newEnv(t, func(_ *sluicehttp.Config, d *sluicehttp.Deps) {
		d.Metrics = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			_, _ = w.Write([]byte("sluice_serve_runs_in_flight 0\n"))
		})
	})
	rec = e.do(t, http.MethodGet, "/metrics", "", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "sluice_serve_runs_in_flight 0\n", rec.Body.String())
}

type observed struct {
	method, route string
	status        int
}

type fakeMetrics struct {
	mu  sync.Mutex
	got []observed
}

func (f *fakeMetrics) Observe(method, route string, status int, dur time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if dur < 0 {
		panic("negative duration")
	}
	f.got = append(f.got, observed{method, route, status})
}

func TestRequestMetricsUseRoutePatterns(t *testing.T) {
	t.Parallel()
	m := &fakeMetrics{}
	e := newEnv(t, func(_ *sluicehttp.Config, d *sluicehttp.Deps) { d.RequestMetrics = m })
	e.do(t, http.MethodGet, "/v1/runs/0190-abc", viewerToken, nil)
	e.do(t, http.MethodPost, "/v1/runs/0190-abc/cancel", viewerToken, nil)
	e.do(t, http.MethodGet, "/v1/whatever/0190", viewerToken, nil)
	e.do(t, http.MethodGet, "/livez", "", nil)
	require.Equal(t, []observed{
		{"GET", "/v1/runs/:id", 200},
		{"POST", "/v1/runs/:id/cancel", 403},
		{"GET", "unmatched", 404},
		{"GET", "/livez", 200},
	}, m.got)
}

type fakeConnectors []pipeline.Spec

func (f fakeConnectors) Specs() []pipeline.Spec { return f }

func TestConnectors(t *testing.T) {
	t.Parallel()
	specs := fakeConnectors{
		{Type: "sqlite", Roles: pipeline.RoleBoth, Description: "SQLite", ExactlyOnce: true,
			Fields: []pipeline.FieldSpec{{Name: "path", Type: pipeline.FieldString, Required: true},
				{Name: "table", Type: pipeline.FieldString, Role: pipeline.RoleSink}}},
		{Type: "generate", Roles: pipeline.RoleSource, Fields: []pipeline.FieldSpec{{Name: "rows", Type: pipeline.FieldInt}}},
	}
	e := newEnv(t, func(_ *sluicehttp.Config, d *sluicehttp.Deps) { d.Connectors = specs })
	rec := e.do(t, http.MethodGet, "/v1/connectors", viewerToken, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	list := decode(t, rec)["connectors"].([]any)
	require.Len(t, list, 2)
	gen := list[0].(map[string]any)
	require.Equal(t, "generate", gen["type"], "sorted by type")
	require.Equal(t, []any{"source"}, gen["roles"])
	require.Contains(t, gen["schemas"], "source")
	require.NotContains(t, gen["schemas"], "sink")
	sq := list[1].(map[string]any)
	require.Equal(t, []any{"source", "sink"}, sq["roles"])
	require.Equal(t, true, sq["exactly_once"])
	sink := sq["schemas"].(map[string]any)["sink"].(map[string]any)
	require.Contains(t, sink["properties"], "table")
	require.NotContains(t, sq["schemas"].(map[string]any)["source"].(map[string]any)["properties"], "table")
	require.Equal(t, pipeline.SchemaDialect, sink["$schema"])

	e = newEnv(t)
	require.JSONEq(t, `{"connectors": []}`, e.do(t, http.MethodGet, "/v1/connectors", viewerToken, nil).Body.String())
}

func TestAudit(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var gotAfter int64
	var gotLimit int
	e.runs.audit = func(_ runs.Principal, after int64, limit int) ([]runs.AuditEntry, error) {
		gotAfter, gotLimit = after, limit
		return []runs.AuditEntry{
			{Seq: 8, At: t0, Actor: "otto", Action: "run.submitted", RunID: "r-1", Details: map[string]any{"pool": "default"}},
			{Seq: 9, At: t0, Actor: "system", Action: "runs.purged"},
		}, nil
	}
	rec := e.do(t, http.MethodGet, "/v1/audit?after=7&limit=2", adminToken, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.JSONEq(t, `{"entries": [
		{"at": "2026-03-04T05:06:07Z", "actor": "otto", "action": "run.submitted", "run_id": "r-1", "details": {"pool": "default"}},
		{"at": "2026-03-04T05:06:07Z", "actor": "system", "action": "runs.purged", "run_id": null, "details": {}}],
		"next_after": 9}`, rec.Body.String())
	require.EqualValues(t, 7, gotAfter)
	require.Equal(t, 2, gotLimit)

	e.runs.audit = func(runs.Principal, int64, int) ([]runs.AuditEntry, error) { return nil, nil }
	rec = e.do(t, http.MethodGet, "/v1/audit?after=12", adminToken, nil)
	require.JSONEq(t, `{"entries": [], "next_after": 12}`, rec.Body.String(), "an empty page keeps the position")

	for _, q := range []string{"limit=0", "limit=1001", "after=-2", "actor=x"} {
		rec = e.do(t, http.MethodGet, "/v1/audit?"+q, adminToken, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
	}
}
