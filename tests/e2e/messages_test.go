package e2e_test

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/e2e"
)

// TestMessagesReadAsValidateSaysThem: the API used to rewrite every "key:" of a message
// as "key: REDACTED" — instructions users need. Each message below reads verbatim as the
// local `sluice validate` (or the SPEC) says it, and GET …/config shows an upsert's
// column list while still hiding a password.
func TestMessagesReadAsValidateSaysThem(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServe(t, filepath.Join(dir, "data"), nil)
	sink := func(extra string) string {
		return `version: 1
name: msgs
pipeline:
  source: { type: generate, config: { count: 10, batch_size: 10 } }
  sink:
    type: sqlite
    config: { connection_url: "sqlite:` + filepath.Join(dir, "out.db") + `", table_name: rows, create_table: true, ` + extra + ` }
`
	}
	file := filepath.Join(dir, "upsert.yaml")
	require.NoError(t, os.WriteFile(file, []byte(sink("write_mode: upsert")), 0o600))
	r := e2e.Run(t, e2e.Cmd{Args: []string{"validate", "--json", file}})
	var local struct {
		Errors []struct{ Path, Message string } `json:"errors"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.Stdout), &local), r.String())
	require.Len(t, local.Errors, 1, r.String())
	require.Equal(t, "required when write_mode is upsert", local.Errors[0].Message)
	code, raw := s.call(t, "POST", "/v1/runs", s.token, mustJSON(t, map[string]any{"config": sink("write_mode: upsert")}))
	require.Equal(t, http.StatusUnprocessableEntity, code, string(raw))
	e := decodeError(t, raw)
	require.Contains(t, e.Error.Message, local.Errors[0].Path+": "+local.Errors[0].Message)
	require.Equal(t, []any{map[string]any{"path": local.Errors[0].Path, "message": local.Errors[0].Message,
		"line":   e.Error.Details["errors"].([]any)[0].(map[string]any)["line"],
		"column": e.Error.Details["errors"].([]any)[0].(map[string]any)["column"]}}, e.Error.Details["errors"])

	// A secret param without a vault key, and one too short with a key.
	tmpl := `version: 1
name: secretive
params:
  token: { type: string, secret: true, required: true }
pipeline:
  source: { type: generate, config: { count: 10, batch_size: 10 } }
  sink:
    type: sqlite
    config: { connection_url: "sqlite:` + filepath.Join(dir, "out-${param.token}.db") + `", table_name: rows, write_mode: append, create_table: true }
`
	require.Equal(t, http.StatusCreated, s.api(t, "POST", "/v1/templates", map[string]any{"id": "secretive", "config": tmpl}, nil))
	code, raw = s.call(t, "POST", "/v1/templates/secretive/runs", s.token, mustJSON(t, map[string]any{"params": map[string]any{"token": "long-enough-secret"}}))
	require.Equal(t, http.StatusUnprocessableEntity, code, string(raw))
	require.Contains(t, decodeError(t, raw).Error.Message, "secret params need a vault key: start the server with --vault-key")

	sealed := startServe(t, filepath.Join(dir, "data-sealed"), nil, "--vault-key", newVaultKey(t))
	require.Equal(t, http.StatusCreated, sealed.api(t, "POST", "/v1/templates", map[string]any{"id": "secretive", "config": tmpl}, nil))
	code, raw = sealed.call(t, "POST", "/v1/templates/secretive/runs", sealed.token, mustJSON(t, map[string]any{"params": map[string]any{"token": "ab"}}))
	require.Equal(t, http.StatusUnprocessableEntity, code, string(raw))
	require.Contains(t, decodeError(t, raw).Error.Message, "params.token: secret value too short")

	// The stored config hides the password, not the upsert's column list.
	id := s.submit(t, map[string]any{"config": `version: 1
name: upserting
pipeline:
  source: { type: generate, config: { count: 10, batch_size: 10 } }
  sink:
    type: postgres
    config: { connection_url: "postgres://app:hunter2-hunter2@127.0.0.1:1/x", table_name: rows, write_mode: upsert, key: [id] }
`})
	code, raw = s.call(t, "GET", "/v1/runs/"+id+"/config", s.token, nil)
	require.Equal(t, http.StatusOK, code, string(raw))
	require.NotContains(t, string(raw), "hunter2")
	var answer struct {
		Config string `json:"config"`
	}
	require.NoError(t, json.Unmarshal(raw, &answer), string(raw))
	var view map[string]any
	require.NoError(t, json.Unmarshal([]byte(answer.Config), &view), answer.Config)
	cfg := view["pipeline"].(map[string]any)["sink"].(map[string]any)["config"].(map[string]any)
	require.Equal(t, []any{"id"}, cfg["key"])
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	return raw
}
