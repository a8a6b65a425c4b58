package e2e_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestServeLogsCarryTheRequestID sends a submit with an X-Request-Id to a real server
// with --log-format json and finds the id on the access line and on the submit
// use-case's own line, and in an error body.
func TestServeLogsCarryTheRequestID(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServe(t, filepath.Join(dir, "data"), nil, "--log-format", "json")

	body, err := json.Marshal(map[string]any{"config": generateConfig("traced", filepath.Join(dir, "t.db"), 10, 0, 10, "")})
	require.NoError(t, err)
	req, err := http.NewRequest(http.MethodPost, s.url()+"/v1/runs", bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+s.token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "e2e-submit-1")
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	require.Equal(t, "e2e-submit-1", resp.Header.Get("X-Request-Id"))

	code, raw := s.call(t, "GET", "/v1/runs/does-not-exist", s.token, nil)
	require.Equal(t, http.StatusNotFound, code)
	var eb struct {
		Error struct {
			RequestID string `json:"request_id"`
		} `json:"error"`
	}
	require.NoError(t, json.Unmarshal(raw, &eb), string(raw))
	require.Regexp(t, `^[0-9a-f]{32}$`, eb.Error.RequestID)

	res := s.stop(t)
	byMsg := map[string][]map[string]any{}
	for _, line := range strings.Split(res.Stderr, "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			msg, _ := m["msg"].(string)
			byMsg[msg] = append(byMsg[msg], m)
		}
	}
	require.NotEmpty(t, byMsg, "--log-format json writes JSON lines:\n%s", res.Stderr)
	find := func(msg, id string) map[string]any {
		for _, m := range byMsg[msg] {
			if m["request_id"] == id {
				return m
			}
		}
		return nil
	}
	access := find("request", "e2e-submit-1")
	require.NotNil(t, access, "the access line of the submit:\n%s", res.Stderr)
	require.Equal(t, "/v1/runs", access["route"])
	require.EqualValues(t, http.StatusAccepted, access["status"])
	require.NotNil(t, find("run submitted", "e2e-submit-1"), "the use-case's line carries the id:\n%s", res.Stderr)
	require.NotNil(t, find("request", eb.Error.RequestID), "the 404's id is the one its access line carries")
	require.NotContains(t, res.Stderr, s.token, "the token never reaches the log")
}
