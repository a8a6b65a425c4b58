package http_test

import (
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/gin-gonic/gin"
	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/application/runs"
)

func openAPIDoc(t *testing.T, e *env) map[string]any {
	t.Helper()
	rec := e.do(t, http.MethodGet, "/v1/openapi.json", viewerToken, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "application/json", rec.Header().Get("Content-Type"))
	return decode(t, rec)
}

func TestOpenAPIDescribesExactlyTheRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	doc := openAPIDoc(t, e)
	require.Equal(t, "3.1.0", doc["openapi"])
	require.Equal(t, "1.2.3", doc["info"].(map[string]any)["version"])

	var documented []string
	for path, item := range doc["paths"].(map[string]any) {
		for method, op := range item.(map[string]any) {
			documented = append(documented, strings.ToUpper(method)+" "+path)
			o := op.(map[string]any)
			require.NotEmpty(t, o["summary"], path)
			require.NotEmpty(t, o["responses"], path)
		}
	}
	engine, ok := e.h.(*gin.Engine)
	require.True(t, ok, "New returns the gin engine")
	var routed []string
	for _, r := range engine.Routes() {
		path := r.Path
		for _, seg := range strings.Split(path, "/") {
			if strings.HasPrefix(seg, ":") {
				path = strings.Replace(path, seg, "{"+seg[1:]+"}", 1)
			}
		}
		routed = append(routed, r.Method+" "+path)
	}
	slices.Sort(documented)
	slices.Sort(routed)
	require.Equal(t, routed, documented)
}

func TestOpenAPIAnnotatesPermissionsAndErrors(t *testing.T) {
	t.Parallel()
	doc := openAPIDoc(t, newEnv(t))
	paths := doc["paths"].(map[string]any)
	op := func(path, method string) map[string]any {
		return paths[path].(map[string]any)[method].(map[string]any)
	}
	require.Equal(t, "admin", op("/v1/runs/{id}", "delete")["x-sluice-role"])
	require.Equal(t, "operator", op("/v1/runs/{id}/config", "get")["x-sluice-role"])
	require.Equal(t, true, op("/v1/runs/{id}/logs", "get")["x-sluice-tenant"])
	require.Equal(t, []any{}, op("/readyz", "get")["security"], "open routes need no token")
	submit := op("/v1/runs", "post")["responses"].(map[string]any)
	require.Equal(t, []any{"directive_refused", "history_refused", "host_refused", "invalid_config", "invalid_params", "path_refused", "pool_unserved",
		"secret_param_misplaced", "secret_params_refused", "state_format_refused"}, submit["422"].(map[string]any)["x-sluice-codes"])
	require.Contains(t, submit["429"].(map[string]any)["headers"], "Retry-After")
	require.Contains(t, submit, "401")
	require.Contains(t, submit, "403")
	codes := doc["components"].(map[string]any)["schemas"].(map[string]any)["ErrorPayload"].(map[string]any)["properties"].(map[string]any)["code"].(map[string]any)["enum"]
	require.Len(t, codes, len(sluicehttp.Codes()))
}

// schemaProps returns the property names of a component schema.
func schemaProps(t *testing.T, doc map[string]any, name string) []string {
	t.Helper()
	s, ok := doc["components"].(map[string]any)["schemas"].(map[string]any)[name].(map[string]any)
	require.True(t, ok, "schema %s", name)
	return slices.Sorted(maps.Keys(s["properties"].(map[string]any)))
}

func keys(m map[string]any) []string { return slices.Sorted(maps.Keys(m)) }

// TestAnswersMatchTheSchemas compares real answers with the document, so the handlers'
// JSON and the published schemas cannot drift apart.
func TestAnswersMatchTheSchemas(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runs.get = func(_ runs.Principal, id string) (*runs.Record, error) {
		rec := sampleRecord(id)
		rec.Owner, rec.ErrorCode, rec.TemplateID = "i-1", "timeout", "tpl"
		return rec, nil
	}
	e.runs.logs = func(runs.Principal, string, int64, int) (runs.LogPage, error) {
		l := line(1, "x")
		l.Attrs = map[string]any{"k": 1}
		return runs.LogPage{Lines: []runs.LogLine{l}, Next: 1}, nil
	}
	doc := openAPIDoc(t, e)

	run := decode(t, e.do(t, http.MethodGet, "/v1/runs/r-1", viewerToken, nil))
	require.Equal(t, schemaProps(t, doc, "Run"), keys(run))
	require.Equal(t, schemaProps(t, doc, "Owner"), keys(run["owner"].(map[string]any)))
	require.Equal(t, schemaProps(t, doc, "Stats"), keys(run["stats"].(map[string]any)))
	require.Equal(t, schemaProps(t, doc, "RunError"), keys(run["error"].(map[string]any)))
	require.Equal(t, schemaProps(t, doc, "TemplateRef"), keys(run["template"].(map[string]any)))
	require.Equal(t, schemaProps(t, doc, "Attempt"), keys(run["attempts"].([]any)[0].(map[string]any)))

	list := decode(t, e.do(t, http.MethodGet, "/v1/runs", viewerToken, nil))
	require.Equal(t, schemaProps(t, doc, "ListResponse"), keys(list))

	logs := decode(t, e.do(t, http.MethodGet, "/v1/runs/r-1/logs", viewerToken, nil))
	require.Equal(t, schemaProps(t, doc, "LogsResponse"), keys(logs))
	require.Equal(t, schemaProps(t, doc, "LogLine"), keys(logs["lines"].([]any)[0].(map[string]any)))

	sub := decode(t, e.do(t, http.MethodPost, "/v1/runs", operatorToken, map[string]any{"config": "a: 1"}))
	require.Subset(t, schemaProps(t, doc, "SubmitResponse"), keys(sub))

	cfg := decode(t, e.do(t, http.MethodGet, "/v1/runs/r-1/config", operatorToken, nil))
	require.Equal(t, schemaProps(t, doc, "ConfigResponse"), keys(cfg))

	e.runs.shards = func(runs.Principal, string, string, int) (runs.ShardPage, error) {
		return runs.ShardPage{Shards: []runs.ShardRecord{{Index: 0, Status: "running", Owner: "m1", HasRange: true,
			KeyLo: 1, KeyHi: 9, ErrorCode: "pipeline_error"}}}, nil
	}
	shards := decode(t, e.do(t, http.MethodGet, "/v1/runs/r-1/shards", viewerToken, nil))
	require.Equal(t, schemaProps(t, doc, "ShardsResponse"), keys(shards))
	item := shards["shards"].([]any)[0].(map[string]any)
	require.Equal(t, schemaProps(t, doc, "Shard"), keys(item))
	require.Equal(t, schemaProps(t, doc, "KeyRange"), keys(item["range"].(map[string]any)))

	ready := decode(t, e.do(t, http.MethodGet, "/readyz", "", nil))
	require.Equal(t, schemaProps(t, doc, "Readiness"), keys(ready))
	require.Equal(t, schemaProps(t, doc, "Cluster"), keys(ready["cluster"].(map[string]any)))

	errBody := decode(t, e.do(t, http.MethodGet, "/v1/runs?x=1", viewerToken, nil))
	require.Equal(t, schemaProps(t, doc, "ErrorBody"), keys(errBody))
	require.Subset(t, schemaProps(t, doc, "ErrorPayload"), keys(errBody["error"].(map[string]any)))

	e.runs.audit = func(runs.Principal, int64, int) ([]runs.AuditEntry, error) {
		return []runs.AuditEntry{{Seq: 1, At: t0, Actor: "a", Action: "b"}}, nil
	}
	audit := decode(t, e.do(t, http.MethodGet, "/v1/audit", adminToken, nil))
	require.Equal(t, schemaProps(t, doc, "AuditResponse"), keys(audit))
	require.Equal(t, schemaProps(t, doc, "AuditEntry"), keys(audit["entries"].([]any)[0].(map[string]any)))
}

// TestSubmitSchemaMatchesTheDecoder sends every documented field and expects no
// unknown-field refusal.
func TestSubmitSchemaMatchesTheDecoder(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	doc := openAPIDoc(t, e)
	body := map[string]any{}
	samples := map[string]any{
		"config": "a: 1", "name": "n", "labels": map[string]string{"a": "b"}, "pool": "p", "idempotency_key": "k",
		"run_key": "rk", "timeout_secs": 1, "callback": map[string]any{"url": "http://h", "on": []string{"failed"}, "extra_fields": map[string]any{}},
		"clock": "2026-01-01T00:00:00Z", "retry": map[string]any{"max_attempts": 2, "on": "any"},
	}
	for _, p := range schemaProps(t, doc, "SubmitRequest") {
		v, ok := samples[p]
		require.True(t, ok, "no sample for documented field %q", p)
		body[p] = v
	}
	require.Len(t, body, len(samples))
	raw, err := json.Marshal(body)
	require.NoError(t, err)
	rec := e.do(t, http.MethodPost, "/v1/runs", operatorToken, raw)
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
}
