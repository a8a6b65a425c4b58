package http_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/application/runs"
)

// jsonLogEnv is a test server whose log is JSON through LogHandler, as serve builds it.
func jsonLogEnv(t *testing.T) *env {
	t.Helper()
	var e *env
	e = newEnv(t, func(_ *sluicehttp.Config, d *sluicehttp.Deps) {
		d.Log = slog.New(sluicehttp.LogHandler(slog.NewJSONHandler(&lateWriter{e: &e}, nil)))
	})
	return e
}

// lateWriter writes to the env's buffer, which exists only once newEnv returned.
type lateWriter struct{ e **env }

func (w *lateWriter) Write(p []byte) (int, error) { return (*w.e).log.Write(p) }

// lines decodes the JSON log lines with message msg.
func lines(t *testing.T, e *env, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(e.log.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

func requestIDOf(t *testing.T, body []byte) string {
	t.Helper()
	var b struct {
		Error struct {
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(body, &b), string(body))
	return b.Error.RequestID
}

func TestAccessLogOneLinePerRequestWithTheClientsRequestID(t *testing.T) {
	t.Parallel()
	e := jsonLogEnv(t)
	rec := e.do(t, "GET", "/v1/runs/r-1", adminToken, nil, sluicehttp.RequestIDHeader, "trace-42.a_b")
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "trace-42.a_b", rec.Header().Get(sluicehttp.RequestIDHeader), "the client's id is echoed")

	got := lines(t, e, "request")
	require.Len(t, got, 1, "one line per request")
	l := got[0]
	require.Equal(t, "trace-42.a_b", l["request_id"])
	require.Equal(t, "GET", l["method"])
	require.Equal(t, "/v1/runs/:id", l["route"], "the route pattern, never the raw path")
	require.EqualValues(t, http.StatusOK, l["status"])
	require.EqualValues(t, rec.Body.Len(), l["bytes"])
	require.Equal(t, "ann", l["principal"])
	require.Contains(t, l, "duration_ms")
	require.NotContains(t, e.log.String(), adminToken, "the token never reaches the log")
}

func TestRequestIDIsGeneratedWhenMissingOrUnfit(t *testing.T) {
	t.Parallel()
	for name, sent := range map[string]string{
		"missing":  "",
		"too long": strings.Repeat("a", 65),
		"spaces":   "a b",
		"newline":  "abc\nforged=1",
		"unicode":  "ünïcode",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			e := jsonLogEnv(t)
			var headers []string
			if sent != "" {
				headers = []string{sluicehttp.RequestIDHeader, sent}
			}
			rec := e.do(t, "GET", "/livez", "", nil, headers...)
			id := rec.Header().Get(sluicehttp.RequestIDHeader)
			require.Regexp(t, `^[0-9a-f]{32}$`, id)
			require.Equal(t, id, lines(t, e, "request")[0]["request_id"])
		})
	}
}

func TestErrorBodiesCarryTheRequestID(t *testing.T) {
	t.Parallel()
	e := jsonLogEnv(t)
	e.runs.get = func(runs.Principal, string) (*runs.Record, error) { return nil, errors.New("disk on fire") }

	rec := e.do(t, "GET", "/v1/runs/r-1", adminToken, nil, sluicehttp.RequestIDHeader, "req-500")
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	require.Equal(t, "req-500", requestIDOf(t, rec.Body.Bytes()), "a 500 names the id its log lines carry")
	failed := lines(t, e, "request failed")
	require.Len(t, failed, 1)
	require.Equal(t, "req-500", failed[0]["request_id"], "the handler's own line carries the id")

	rec = e.do(t, "GET", "/v1/runs", "", nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	require.Equal(t, rec.Header().Get(sluicehttp.RequestIDHeader), requestIDOf(t, rec.Body.Bytes()))

	rec = e.do(t, "GET", "/nowhere", adminToken, nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.NotEmpty(t, requestIDOf(t, rec.Body.Bytes()))
}

// A use-case logs with the request's context; LogHandler adds the id to its lines too.
func TestLogHandlerAddsTheRequestIDOfTheContext(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	log := slog.New(sluicehttp.LogHandler(slog.NewJSONHandler(&buf, nil))).With("instance_id", "m1")
	log.InfoContext(sluicehttp.WithRequestID(context.Background(), "r-7"), "run submitted", "run_id", "x")
	log.InfoContext(context.Background(), "no request")
	out := strings.Split(strings.TrimSpace(buf.String()), "\n")
	require.Len(t, out, 2)
	require.Contains(t, out[0], `"request_id":"r-7"`)
	require.Contains(t, out[0], `"instance_id":"m1"`)
	require.NotContains(t, out[1], "request_id")
}
