package runs_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
)

func input() runs.CallbackInput {
	return runs.CallbackInput{
		RunID: "r1", Name: "orders", Status: "failed", Pool: "gpu", Tenant: "acme", RunKey: "rk",
		Labels:       map[string]string{"team": "data"},
		StartedAt:    time.Date(2026, 5, 1, 10, 0, 0, 0, time.FixedZone("CEST", 7200)),
		FinishedAt:   time.Date(2026, 5, 1, 8, 5, 0, 500_000_000, time.UTC),
		Stats:        runs.Stats{RowsRead: 10, RowsWritten: 9, Pages: 1, Bytes: 100, ElapsedMS: 300000},
		ErrorCode:    "pipeline_error",
		ErrorMessage: "sink db page 1: boom",
		Callback: &runs.Callback{URL: "https://hooks.example.com/x",
			ExtraFields: map[string]any{"env": "prod", "n": 3, "nested": map[string]any{"a": true}}},
	}
}

func TestCallbackPayloadShape(t *testing.T) {
	t.Parallel()
	url, payload, ok := runs.CallbackPayload(input())
	require.True(t, ok)
	require.Equal(t, "https://hooks.example.com/x", url)
	require.JSONEq(t, `{
		"run_id": "r1", "name": "orders", "status": "failed", "pool": "gpu", "tenant": "acme",
		"labels": {"team": "data"}, "run_key": "rk",
		"started_at": "2026-05-01T08:00:00Z", "finished_at": "2026-05-01T08:05:00.5Z",
		"stats": {"rows_read": 10, "rows_written": 9, "pages": 1, "bytes": 100, "elapsed_ms": 300000},
		"error": {"code": "pipeline_error", "message": "sink db page 1: boom"},
		"env": "prod", "n": 3, "nested": {"a": true}
	}`, string(payload))
}

func TestCallbackPayloadNulls(t *testing.T) {
	t.Parallel()
	in := input()
	in.Status, in.Tenant, in.RunKey, in.Labels = "cancelled", "", "", nil
	in.StartedAt, in.ErrorCode, in.ErrorMessage = time.Time{}, "", ""
	in.Callback = &runs.Callback{URL: "http://127.0.0.1/x", ExtraFields: map[string]any{"status": "spoofed"}}
	_, payload, ok := runs.CallbackPayload(in)
	require.True(t, ok)
	var body map[string]any
	require.NoError(t, json.Unmarshal(payload, &body))
	require.Nil(t, body["tenant"])
	require.Nil(t, body["run_key"])
	require.Nil(t, body["started_at"])
	require.Nil(t, body["error"])
	require.Contains(t, body, "error")
	require.Equal(t, map[string]any{}, body["labels"])
	require.Equal(t, "cancelled", body["status"], "a standard field always wins over an extra one")
}

func TestCallbackPayloadOnFilter(t *testing.T) {
	t.Parallel()
	tests := []struct {
		on     []string
		status string
		ok     bool
	}{
		{nil, "completed", true},
		{nil, "failed", true},
		{nil, "cancelled", true},
		{nil, "running", false},
		{nil, "pending", false},
		{[]string{"failed"}, "failed", true},
		{[]string{"failed"}, "completed", false},
		{[]string{"completed", "cancelled"}, "cancelled", true},
		{[]string{"completed", "cancelled"}, "failed", false},
	}
	for _, tc := range tests {
		in := input()
		in.Status = tc.status
		in.Callback.On = tc.on
		_, _, ok := runs.CallbackPayload(in)
		require.Equal(t, tc.ok, ok, "on=%v status=%s", tc.on, tc.status)
	}
	in := input()
	in.Callback = nil
	_, _, ok := runs.CallbackPayload(in)
	require.False(t, ok, "no callback, no row")

	var build runs.CallbackBuilder = runs.CallbackPayload // the store port accepts it as is
	_, _, ok = build(input())
	require.True(t, ok)
}
