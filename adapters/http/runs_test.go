package http_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

func TestSubmitJSONWithTextConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do(t, http.MethodPost, "/v1/runs", operatorToken, map[string]any{
		"config": "pipeline:\n  name: x\n", "name": "orders", "labels": map[string]string{"env": "prod"},
		"pool": "gpu", "idempotency_key": "k1", "run_key": "2026-01-01", "timeout_secs": 60,
		"callback": map[string]any{"url": "https://hooks.example/x", "on": []string{"failed"}, "extra_fields": map[string]any{"team": "data"}},
		"clock":    "2026-01-01T00:00:00+02:00",
	})
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.Equal(t, map[string]any{"run_id": "r-new", "status": "pending"}, decode(t, rec))
	require.Equal(t, "/v1/runs/r-new", rec.Header().Get("Location"))
	req := e.runs.submitted[0]
	require.Equal(t, "pipeline:\n  name: x\n", string(req.Config))
	require.Equal(t, "orders", req.Name)
	require.Equal(t, map[string]string{"env": "prod"}, req.Labels)
	require.Equal(t, "gpu", req.Pool)
	require.Equal(t, "k1", req.IdempotencyKey)
	require.Equal(t, "2026-01-01", req.RunKey)
	require.Equal(t, 60, req.TimeoutSecs)
	require.Equal(t, &runs.Callback{URL: "https://hooks.example/x", On: []string{"failed"}, ExtraFields: map[string]any{"team": "data"}}, req.Callback)
	require.True(t, req.Clock.Equal(time.Date(2025, 12, 31, 22, 0, 0, 0, time.UTC)))
	require.Equal(t, "api", req.TriggerKind)
	require.Equal(t, runs.Principal{Name: "otto", Role: runs.Operator}, req.Principal)
}

func TestSubmitJSONWithObjectConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do(t, http.MethodPost, "/v1/runs", operatorToken, `{"config": {"pipeline": {"name": "x"}}}`)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	require.JSONEq(t, `{"pipeline": {"name": "x"}}`, string(e.runs.submitted[0].Config))
}

func TestSubmitRawYAML(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	yaml := "pipeline:\n  name: x\n"
	rec := e.do(t, http.MethodPost, "/v1/runs?name=n&pool=p&label=a=1&label=b=2&run_key=rk&idempotency_key=ik&timeout_secs=5&clock=2026-01-01T00:00:00Z",
		operatorToken, nil, "Content-Type", "application/yaml")
	require.Equal(t, http.StatusBadRequest, rec.Code, "an empty YAML body is refused")

	req := httptest.NewRequest(http.MethodPost, "/v1/runs?name=n&pool=p&label=a=1&label=b=2&run_key=rk&idempotency_key=ik&timeout_secs=5&clock=2026-01-01T00:00:00Z", strings.NewReader(yaml))
	req.Header.Set("Authorization", "Bearer "+operatorToken)
	req.Header.Set("Content-Type", "application/yaml; charset=utf-8")
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, req)
	require.Equal(t, http.StatusAccepted, w.Code, w.Body.String())
	got := e.runs.submitted[0]
	require.Equal(t, yaml, string(got.Config))
	require.Equal(t, "n", got.Name)
	require.Equal(t, "p", got.Pool)
	require.Equal(t, map[string]string{"a": "1", "b": "2"}, got.Labels)
	require.Equal(t, "rk", got.RunKey)
	require.Equal(t, "ik", got.IdempotencyKey)
	require.Equal(t, 5, got.TimeoutSecs)
	require.NotNil(t, got.Clock)

	req = httptest.NewRequest(http.MethodPost, "/v1/runs?naem=n", strings.NewReader(yaml))
	req.Header.Set("Authorization", "Bearer "+operatorToken)
	req.Header.Set("Content-Type", "text/yaml")
	w = httptest.NewRecorder()
	e.h.ServeHTTP(w, req)
	require.Equal(t, http.StatusBadRequest, w.Code)
	_, msg, _ := errorOf(t, w)
	require.Contains(t, msg, `"naem"`)
}

func TestSubmitReplayIs200(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runs.submit = func(runs.SubmitRequest) (runs.SubmitResult, error) {
		return runs.SubmitResult{RunID: "r-old", Status: "running", Replayed: true}, nil
	}
	rec := e.do(t, http.MethodPost, "/v1/runs", operatorToken, map[string]any{"config": "a: 1", "idempotency_key": "k"})
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, map[string]any{"run_id": "r-old", "status": "running", "replayed": true}, decode(t, rec))
}

func TestSubmitRefusesBadBodies(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		body string
		want string
	}{
		"unknown field":        {`{"config": "a: 1", "colour": "red"}`, `unknown field "colour"`},
		"unknown nested field": {`{"config": "a: 1", "callback": {"url": "http://x", "retries": 3}}`, `unknown field "retries"`},
		"not JSON":             {`{"config": `, "truncated"},
		"syntax":               {`{"config" "a"}`, "not valid JSON"},
		"empty":                {``, "empty"},
		"array":                {`[1]`, "must be a JSON object"},
		"raw YAML as JSON":     {"pipeline:\n  name: x\n", "Content-Type: application/yaml"},
		"two values":           {`{"config": "a: 1"} {}`, "more than one JSON value"},
		"no config":            {`{"name": "x"}`, `"config" is required`},
		"null config":          {`{"config": null}`, `"config" is required`},
		"blank config":         {`{"config": "  "}`, `"config" is empty`},
		"number config":        {`{"config": 3}`, `must be YAML/JSON text`},
		"array config":         {`{"config": [1]}`, `must be YAML/JSON text`},
		"wrong type":           {`{"config": "a: 1", "timeout_secs": "ten"}`, `"timeout_secs" must be an integer`},
		"labels type":          {`{"config": "a: 1", "labels": {"a": 1}}`, `"labels" must be a string`},
		"negative timeout":     {`{"config": "a: 1", "timeout_secs": -1}`, "timeout_secs"},
		"bad clock":            {`{"config": "a: 1", "clock": "yesterday"}`, `"clock" must be an RFC 3339 time`},
		"callback without url": {`{"config": "a: 1", "callback": {"on": ["failed"]}}`, "callback.url"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			rec := e.do(t, http.MethodPost, "/v1/runs", operatorToken, tc.body)
			require.Equal(t, http.StatusBadRequest, rec.Code, rec.Body.String())
			code, msg, _ := errorOf(t, rec)
			require.Equal(t, "invalid_body", code)
			require.Contains(t, msg, tc.want)
			require.Zero(t, e.runs.callCount(), "a refused body never reaches the service")
		})
	}
}

func TestSubmitRefusesQueryWithJSONBody(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do(t, http.MethodPost, "/v1/runs?name=x", operatorToken, map[string]any{"config": "a: 1"})
	require.Equal(t, http.StatusBadRequest, rec.Code)
}

func TestBodyLimit(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *sluicehttp.Config, _ *sluicehttp.Deps) { c.BodyLimitBytes = 64 })
	big := `{"config": "` + strings.Repeat("a", 100) + `"}`
	rec := e.do(t, http.MethodPost, "/v1/runs", operatorToken, big)
	require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
	code, msg, _ := errorOf(t, rec)
	require.Equal(t, "body_too_large", code)
	require.Contains(t, msg, "64 bytes")

	// Without a declared length the limit bites while reading.
	req := httptest.NewRequest(http.MethodPost, "/v1/runs", strings.NewReader(big))
	req.ContentLength = -1
	req.Header.Set("Authorization", "Bearer "+operatorToken)
	w := httptest.NewRecorder()
	e.h.ServeHTTP(w, req)
	require.Equal(t, http.StatusRequestEntityTooLarge, w.Code)
	require.Zero(t, e.runs.callCount())

	rec = e.do(t, http.MethodPost, "/v1/runs", operatorToken, `{"config": "a: 1"}`)
	require.Equal(t, http.StatusAccepted, rec.Code, "a body under the limit passes")
}

func TestDefaultBodyLimitIsOneMiB(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	big := `{"config": "` + strings.Repeat("a", 1<<20) + `"}`
	rec := e.do(t, http.MethodPost, "/v1/runs", operatorToken, big)
	require.Equal(t, http.StatusRequestEntityTooLarge, rec.Code)
}

func TestGetRunResource(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do(t, http.MethodGet, "/v1/runs/r-1", viewerToken, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.JSONEq(t, `{
		"run_id": "r-1", "name": "orders", "status": "completed", "pool": "default", "tenant": null,
		"labels": {"env": "prod"}, "trigger_kind": "api", "run_key": "2026-03-04", "run_date": "2026-03-04",
		"attempt": 1, "max_attempts": 3, "owner": null,
		"created_at": "2026-03-04T05:06:07Z", "claimed_at": "2026-03-04T05:06:08Z",
		"started_at": "2026-03-04T05:06:09Z", "finished_at": "2026-03-04T05:06:16Z",
		"stats": {"rows_read": 10, "rows_written": 9, "pages": 2, "bytes": 300, "elapsed_ms": 7000},
		"error": null, "shards": null,
		"attempts": [{"n": 1, "instance_id": "i-1", "claimed_at": "2026-03-04T05:06:08Z", "ended_at": "2026-03-04T05:06:16Z", "outcome": "completed", "error": null}],
		"template": null, "retry": null, "not_before": null
	}`, rec.Body.String())
	require.NotContains(t, rec.Body.String(), "secret", "the config never shows")
}

func TestGetRunResourceOptionalParts(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runs.get = func(_ runs.Principal, id string) (*runs.Record, error) {
		return &runs.Record{ID: id, Name: "n", Status: "running", Tenant: "acme", Owner: "i-2", OwnerListen: "10.0.0.2:8080",
			ErrorCode: "pipeline_error", ErrorMessage: "sink postgres://u:pw@h/db: refused",
			TemplateID: "tpl-1", TemplateVersion: 4, CreatedAt: t0,
			Attempts: []run.Attempt{{N: 1, InstanceID: "i-2", ClaimedAt: t0}}}, nil
	}
	m := decode(t, e.do(t, http.MethodGet, "/v1/runs/r-2", viewerToken, nil))
	require.Equal(t, "acme", m["tenant"])
	require.Equal(t, map[string]any{"instance_id": "i-2", "listen": "10.0.0.2:8080"}, m["owner"])
	require.Equal(t, map[string]any{"code": "pipeline_error", "message": "sink postgres://REDACTED@h/db: refused"}, m["error"])
	require.Equal(t, map[string]any{"id": "tpl-1", "version": 4.0}, m["template"])
	require.Equal(t, map[string]any{}, m["labels"], "labels are an object, never null")
	require.Nil(t, m["run_key"])
	require.Nil(t, m["finished_at"])
	att := m["attempts"].([]any)[0].(map[string]any)
	require.Nil(t, att["ended_at"])
	require.Nil(t, att["outcome"])
}

// A run waiting for its retry shows its policy, when it is due, and why each attempt
// failed (SPEC §14.5), with secrets masked in the attempt errors too.
func TestGetRunResourceRetry(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ended := t0.Add(time.Second)
	e.runs.get = func(_ runs.Principal, id string) (*runs.Record, error) {
		p, err := runs.Retry{MaxAttempts: 4, InitialSecs: 5, On: "any"}.Policy()
		require.NoError(t, err)
		return &runs.Record{ID: id, Name: "n", Status: "pending", CreatedAt: t0, Retry: p, NotBefore: t0.Add(time.Minute),
			Attempts: []run.Attempt{{N: 1, InstanceID: "i-2", ClaimedAt: t0, EndedAt: ended, Outcome: run.OutcomeFailed,
				Error: &run.Error{Code: run.CodePipelineError, Message: "source postgres://u:pw@h/db: connection reset"}}}}, nil
	}
	m := decode(t, e.do(t, http.MethodGet, "/v1/runs/r-3", viewerToken, nil))
	require.Equal(t, map[string]any{"max_attempts": 4.0, "initial_secs": 5.0, "max_secs": 600.0, "multiplier": 2.0, "on": "any"}, m["retry"])
	require.Equal(t, "2026-03-04T05:07:07Z", m["not_before"])
	att := m["attempts"].([]any)[0].(map[string]any)
	require.Equal(t, map[string]any{"code": "pipeline_error", "message": "source postgres://REDACTED@h/db: connection reset"}, att["error"])
}

func TestGetRefusesQueryParams(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do(t, http.MethodGet, "/v1/runs/r-1?verbose=1", viewerToken, nil)
	require.Equal(t, http.StatusBadRequest, rec.Code)
}

func TestListFilters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runs.list = func(runs.Principal, runs.Filter) (runs.Page, error) {
		return runs.Page{Runs: []*runs.Record{sampleRecord("r-1"), sampleRecord("r-2")}, NextCursor: "opaque-2"}, nil
	}
	rec := e.do(t, http.MethodGet, "/v1/runs?status=failed,cancelled&status=running&name=orders&pool=gpu&tenant=&run_key=rk"+
		"&label=env=prod&label=team=data&since=2026-01-01T00:00:00Z&until=2026-02-01T00:00:00Z&limit=2&cursor=opaque-1", viewerToken, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	f := e.runs.filters[0]
	require.Equal(t, []string{"failed", "cancelled", "running"}, f.Status)
	require.Equal(t, "orders", f.Name)
	require.Equal(t, "gpu", f.Pool)
	require.True(t, f.TenantSet)
	require.Empty(t, f.Tenant)
	require.Equal(t, "rk", f.RunKey)
	require.Equal(t, map[string]string{"env": "prod", "team": "data"}, f.Labels)
	require.Equal(t, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), f.Since)
	require.Equal(t, time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC), f.Until)
	require.Equal(t, 2, f.Limit)
	require.Equal(t, "opaque-1", f.Cursor, "the cursor passes through untouched")
	m := decode(t, rec)
	require.Equal(t, "opaque-2", m["next_cursor"])
	require.Len(t, m["runs"], 2)
	require.Equal(t, "r-2", m["runs"].([]any)[1].(map[string]any)["run_id"])
}

func TestListDefaultsAndLastPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runs.list = func(runs.Principal, runs.Filter) (runs.Page, error) { return runs.Page{}, nil }
	rec := e.do(t, http.MethodGet, "/v1/runs", viewerToken, nil)
	require.JSONEq(t, `{"runs": [], "next_cursor": null}`, rec.Body.String())
	f := e.runs.filters[0]
	require.Equal(t, 50, f.Limit)
	require.False(t, f.TenantSet)
	require.Nil(t, f.Status)
}

func TestListRefusesBadFilters(t *testing.T) {
	t.Parallel()
	for query, want := range map[string]string{
		"staus=failed":     `unknown query parameter "staus"`,
		"status=new":       "not a run status",
		"status=done":      "not a run status",
		"limit=0":          `"limit" must be an integer from 1 to 500`,
		"limit=501":        `"limit" must be an integer from 1 to 500`,
		"limit=ten":        `"limit"`,
		"label=env":        "must be key=value",
		"label==x":         "must be key=value",
		"since=yesterday":  `"since" must be an RFC 3339 time`,
		"until=2026-01-01": `"until" must be an RFC 3339 time`,
		"since=2026-02-01T00:00:00Z&until=2026-01-01T00:00:00Z": `"until" must be after "since"`,
	} {
		e := newEnv(t)
		rec := e.do(t, http.MethodGet, "/v1/runs?"+query, viewerToken, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, query)
		code, msg, _ := errorOf(t, rec)
		require.Equal(t, "invalid_body", code)
		require.Contains(t, msg, want, query)
		require.Zero(t, e.runs.callCount(), query)
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do(t, http.MethodPost, "/v1/runs/r-1/cancel", operatorToken, nil)
	require.Equal(t, http.StatusOK, rec.Code, "a queued run ends at once")
	require.Equal(t, "cancelled", decode(t, rec)["status"])

	e.runs.cancel = func(_ runs.Principal, id string) (*runs.Record, bool, error) {
		rec := sampleRecord(id)
		rec.Status = "running"
		return rec, false, nil
	}
	rec = e.do(t, http.MethodPost, "/v1/runs/r-1/cancel", operatorToken, nil)
	require.Equal(t, http.StatusAccepted, rec.Code, "a running run is signalled")
	require.Equal(t, "running", decode(t, rec)["status"])

	rec = e.do(t, http.MethodPost, "/v1/runs/r-1/cancel", operatorToken, `{}`)
	require.Equal(t, http.StatusAccepted, rec.Code, "an empty object is no body")
	rec = e.do(t, http.MethodPost, "/v1/runs/r-1/cancel", operatorToken, `{"force": true}`)
	require.Equal(t, http.StatusBadRequest, rec.Code)
}

func TestDelete(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do(t, http.MethodDelete, "/v1/runs/r-1", adminToken, nil)
	require.Equal(t, http.StatusNoContent, rec.Code)
	require.Empty(t, rec.Body.String())

	e.runs.del = func(runs.Principal, string) error { return runs.ErrRunNotTerminal }
	rec = e.do(t, http.MethodDelete, "/v1/runs/r-1", adminToken, nil)
	require.Equal(t, http.StatusConflict, rec.Code)
	code, _, _ := errorOf(t, rec)
	require.Equal(t, "run_not_terminal", code)
}

func TestRollback(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do(t, http.MethodPost, "/v1/runs/r-1/rollback", operatorToken, nil)
	require.Equal(t, http.StatusAccepted, rec.Code)
	require.Equal(t, map[string]any{"run_id": "r-rollback", "status": "pending"}, decode(t, rec))
	require.Nil(t, e.runs.rolledBack[0], "no body: the stored config")

	rec = e.do(t, http.MethodPost, "/v1/runs/r-1/rollback", operatorToken, `{"config": "a: 2"}`)
	require.Equal(t, http.StatusAccepted, rec.Code)
	require.Equal(t, "a: 2", string(e.runs.rolledBack[1]))

	rec = e.do(t, http.MethodPost, "/v1/runs/r-1/rollback", operatorToken, `{"config": {"a": 3}}`)
	require.Equal(t, http.StatusAccepted, rec.Code)
	require.JSONEq(t, `{"a": 3}`, string(e.runs.rolledBack[2]))

	rec = e.do(t, http.MethodPost, "/v1/runs/r-1/rollback", operatorToken, `{"confg": "a: 2"}`)
	require.Equal(t, http.StatusBadRequest, rec.Code)
	rec = e.do(t, http.MethodPost, "/v1/runs/r-1/rollback", operatorToken, `{"config": 7}`)
	require.Equal(t, http.StatusBadRequest, rec.Code)
}

func TestConfig(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do(t, http.MethodGet, "/v1/runs/r-1/config", operatorToken, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, map[string]any{"run_id": "r-1", "config": "pipeline:\n  name: orders\n"}, decode(t, rec))
}

func TestShardsOfAnUnshardedRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do(t, http.MethodGet, "/v1/runs/r-1/shards", viewerToken, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.JSONEq(t, `{"shards": [], "next_cursor": null}`, rec.Body.String())

	e.runs.get = func(runs.Principal, string) (*runs.Record, error) { return nil, errNotFound() }
	rec = e.do(t, http.MethodGet, "/v1/runs/r-x/shards", viewerToken, nil)
	require.Equal(t, http.StatusNotFound, rec.Code, "shards of a missing run")

	e.runs.get = nil
	for _, q := range []string{"cursor=abc", "limit=0", "page=2"} {
		rec = e.do(t, http.MethodGet, "/v1/runs/r-1/shards?"+q, viewerToken, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
	}
}

func TestShardsOfAShardedRun(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	var gotCursor string
	var gotLimit int
	e.runs.shards = func(_ runs.Principal, id, cursor string, limit int) (runs.ShardPage, error) {
		gotCursor, gotLimit = cursor, limit
		return runs.ShardPage{NextCursor: "s1", Shards: []runs.ShardRecord{
			{Index: 0, Status: "running", Attempt: 1, MaxAttempts: 3, Owner: "m1", OwnerListen: "127.0.0.1:8080",
				HasRange: true, KeyLo: 1, KeyHi: 50, KeyNulls: true, Stats: runs.Stats{RowsWritten: 20}, ClaimedAt: at},
			{Index: 1, Status: "failed", Attempt: 3, MaxAttempts: 3, ErrorCode: "poisoned", ErrorMessage: "reclaimed 3 times",
				ClaimedAt: at, FinishedAt: at.Add(time.Minute)},
		}}, nil
	}
	rec := e.do(t, http.MethodGet, "/v1/runs/r-1/shards?limit=2&cursor=s0", viewerToken, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "s0", gotCursor)
	require.Equal(t, 2, gotLimit)
	require.JSONEq(t, `{"next_cursor": "s1", "shards": [
		{"index": 0, "status": "running", "attempt": 1, "max_attempts": 3,
		 "owner": {"instance_id": "m1", "listen": "127.0.0.1:8080"}, "range": {"lo": 1, "hi": 50, "nulls": true},
		 "stats": {"rows_read": 0, "rows_written": 20, "pages": 0, "bytes": 0, "elapsed_ms": 0}, "error": null,
		 "claimed_at": "2026-05-01T12:00:00Z", "finished_at": null},
		{"index": 1, "status": "failed", "attempt": 3, "max_attempts": 3, "owner": null, "range": null,
		 "stats": {"rows_read": 0, "rows_written": 0, "pages": 0, "bytes": 0, "elapsed_ms": 0},
		 "error": {"code": "poisoned", "message": "reclaimed 3 times"},
		 "claimed_at": "2026-05-01T12:00:00Z", "finished_at": "2026-05-01T12:01:00Z"}]}`, rec.Body.String())
}
