package bootstrap_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/telemetry/otlptest"
	"github.com/sluicehq/sluice/tests/testdb"
)

// clientTrace is the trace a client submits in: its span is the parent of the request's.
const (
	clientTraceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	clientSpanID  = "00f067aa0ba902b7"
)

// One trace from a submit on member A to the execution on member B (SPEC §14.6): two
// clustered members on one PostgreSQL history export to one OTLP receiver; A serves only
// pool "front", so B claims the run. Every span carries the client's trace id; the run's
// spans on B are children of the submit span on A, found through the traceparent stored
// with the run; the request span names the route and the status.
func TestServeTraceFollowsARunFromSubmitToAnotherMember(t *testing.T) {
	t.Parallel()
	history := testdb.Postgres(t)
	recv := otlptest.NewReceiver()
	defer recv.Close()
	common := []string{"--history", history, "--no-auth", "--cluster-poll-secs", "1", "--otlp-endpoint", recv.URL}
	a := startClusterServer(t, append(common, "--data-dir", t.TempDir(), "--pool", "front")...)
	b := startClusterServer(t, append(common, "--data-dir", t.TempDir())...)
	require.Eventually(t, func() bool {
		code, ready := a.ready(t)
		return code == http.StatusOK && ready["cluster"].(map[string]any)["instances"] == float64(2)
	}, 20*time.Second, 50*time.Millisecond, "a sees b, which serves the default pool")

	body := `{"config": "version: 1\nname: traced\npipeline:\n  source: {type: generate, config: {count: 25, batch_size: 10}}\n  sink: {type: stdout}\n"}`
	req, err := http.NewRequest("POST", "http://"+a.addr+"/v1/runs", strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("traceparent", "00-"+clientTraceID+"-"+clientSpanID+"-01")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	var sub map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&sub))
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode, sub)
	id := sub["run_id"].(string)
	require.Eventually(t, func() bool {
		r, err := http.Get("http://" + a.addr + "/v1/runs/" + id)
		if err != nil {
			return false
		}
		defer r.Body.Close()
		var run map[string]any
		return json.NewDecoder(r.Body).Decode(&run) == nil && run["status"] == "completed"
	}, 30*time.Second, 50*time.Millisecond, "the run completes on b")

	// A stop flushes what a member's exporter still holds.
	require.Equal(t, 0, b.stop(), b.stderr.String())
	require.Equal(t, 0, a.stop(), a.stderr.String())

	byName := map[string]otlptest.Span{}
	for _, s := range recv.Spans() {
		if s.TraceID != clientTraceID {
			continue // probes and the run lookups above are traces of their own
		}
		if s.Name == "GET /v1/runs/:id" {
			continue
		}
		_, dup := byName[s.Name]
		require.Falsef(t, dup, "one %s span in the trace", s.Name)
		byName[s.Name] = s
	}
	request, submit := byName["POST /v1/runs"], byName["submit"]
	claim, attempt, finish := byName["claim"], byName["run.attempt"], byName["finish"]
	for name, s := range map[string]otlptest.Span{"request": request, "submit": submit, "claim": claim,
		"run.attempt": attempt, "finish": finish} {
		require.NotEmptyf(t, s.SpanID, "the trace has a %s span; got %v", name, keys(byName))
	}

	memberA := request.Resource["service.instance.id"]
	memberB := attempt.Resource["service.instance.id"]
	require.NotEmpty(t, memberA)
	require.NotEqual(t, memberA, memberB, "submitted on a, executed on b")

	require.Equal(t, clientSpanID, request.ParentID, "the request joins the client's trace")
	require.Equal(t, "/v1/runs", request.Attrs["http.route"])
	require.Equal(t, "POST", request.Attrs["http.request.method"])
	require.Equal(t, "202", request.Attrs["http.response.status_code"])
	require.NotEmpty(t, request.Attrs["request_id"])

	require.Equal(t, request.SpanID, submit.ParentID)
	require.Equal(t, memberA, submit.Resource["service.instance.id"])
	require.Equal(t, id, submit.Attrs["run_id"])
	require.Equal(t, "traced", submit.Attrs["pipeline"])

	for _, s := range []otlptest.Span{claim, attempt} {
		require.Equal(t, submit.SpanID, s.ParentID, "%s on b is a child of the submit span on a", s.Name)
		require.Equal(t, memberB, s.Resource["service.instance.id"])
		require.Equal(t, id, s.Attrs["run_id"])
		require.Equal(t, "traced", s.Attrs["pipeline"])
		require.Equal(t, "default", s.Attrs["pool"])
		require.Equal(t, "1", s.Attrs["attempt"])
	}
	require.Equal(t, "completed", attempt.Attrs["status"])
	require.Equal(t, []string{"10", "10", "5"}, pageRows(attempt), "each confirmed page is an event of the attempt")
	require.Equal(t, attempt.SpanID, finish.ParentID)
	require.Equal(t, "completed", finish.Attrs["status"])
	require.False(t, finish.Failed)
}

func keys(m map[string]otlptest.Span) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}

// --otlp-endpoint also reads OpenTelemetry's own variable, and a value that is not an
// http(s) URL is refused naming both.
func TestServeRefusesABadOTLPEndpoint(t *testing.T) {
	t.Parallel()
	code, _, stderr := run(t, map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4317"},
		"serve", "--history", "memory", "--no-auth", "--data-dir", t.TempDir())
	require.Equal(t, 2, code, stderr)
	require.Contains(t, stderr, "--otlp-endpoint")
	require.Contains(t, stderr, "OTEL_EXPORTER_OTLP_ENDPOINT")
}
