package http_test

import (
	"context"
	"io/fs"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/configtext"
	"github.com/sluicehq/sluice/adapters/connectors/builtin"
	sluicehttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
)

type mapEnv map[string]string

func (m mapEnv) LookupEnv(name string) (string, bool) { v, ok := m[name]; return v, ok }
func (mapEnv) ReadFile(string) ([]byte, error)        { return nil, fs.ErrNotExist }

const wiredConfig = `version: 1
name: %s
pipeline:
  source: { type: generate, config: { count: 10 } }
  sink: { type: file, config: { path: "/tmp/out-${env:USER_DB}.jsonl" } }
`

// newWiredEnv serves the real run service over the in-memory history.
func newWiredEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, "memory", store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = st.Close() })
	require.NoError(t, st.Migrate(ctx))
	reg := builtin.Registry()
	svc := runs.New(runs.Deps{Store: st, Loader: &execute.Loader{Decoder: configtext.Decoder{},
		Env: mapEnv{"USER_DB": "postgres://app:hunter2@db/x", "SLUICE_VAULT_KEY": "k"}, Catalog: reg}}, runs.Config{})
	e := &env{runs: nil, log: &syncBuffer{}}
	e.h = sluicehttp.New(sluicehttp.Config{Auth: sluicehttp.AuthConfig{Principals: principals()}},
		sluicehttp.Deps{Runs: svc, Connectors: reg})
	return e
}

func config(name string) string { return strings.Replace(wiredConfig, "%s", name, 1) }

func TestWiredRunLifecycle(t *testing.T) {
	t.Parallel()
	e := newWiredEnv(t)

	rec := e.do(t, http.MethodPost, "/v1/runs", operatorToken, map[string]any{"config": config("orders"), "idempotency_key": "k1",
		"labels": map[string]string{"env": "prod"}})
	require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	first := decode(t, rec)
	id := first["run_id"].(string)
	require.Equal(t, "pending", first["status"])

	rec = e.do(t, http.MethodPost, "/v1/runs", operatorToken, map[string]any{"config": config("orders"), "idempotency_key": "k1",
		"labels": map[string]string{"env": "prod"}})
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, map[string]any{"run_id": id, "status": "pending", "replayed": true}, decode(t, rec))

	rec = e.do(t, http.MethodPost, "/v1/runs", operatorToken, map[string]any{"config": config("orders"), "idempotency_key": "k1",
		"labels": map[string]string{"env": "dev"}})
	require.Equal(t, http.StatusConflict, rec.Code, rec.Body.String())

	run := decode(t, e.do(t, http.MethodGet, "/v1/runs/"+id, viewerToken, nil))
	require.Equal(t, "orders", run["name"])
	require.Equal(t, "api", run["trigger_kind"])
	require.Equal(t, map[string]any{"env": "prod"}, run["labels"])
	require.Nil(t, run["finished_at"])

	cfg := decode(t, e.do(t, http.MethodGet, "/v1/runs/"+id+"/config", operatorToken, nil))
	require.Contains(t, cfg["config"], "${env:USER_DB}", "the stored config is the raw text")
	require.NotContains(t, cfg["config"], "hunter2")

	rec = e.do(t, http.MethodDelete, "/v1/runs/"+id, adminToken, nil)
	require.Equal(t, http.StatusConflict, rec.Code)
	code, _, _ := errorOf(t, rec)
	require.Equal(t, "run_not_terminal", code)

	rec = e.do(t, http.MethodPost, "/v1/runs/"+id+"/cancel", operatorToken, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	require.Equal(t, "cancelled", decode(t, rec)["status"])

	logs := decode(t, e.do(t, http.MethodGet, "/v1/runs/"+id+"/logs", viewerToken, nil))
	require.Equal(t, true, logs["done"])

	require.Equal(t, http.StatusNoContent, e.do(t, http.MethodDelete, "/v1/runs/"+id, adminToken, nil).Code)
	require.Equal(t, http.StatusNotFound, e.do(t, http.MethodGet, "/v1/runs/"+id, viewerToken, nil).Code)
	rec = e.do(t, http.MethodPost, "/v1/runs", operatorToken, map[string]any{"config": config("orders"), "idempotency_key": "k1",
		"labels": map[string]string{"env": "prod"}})
	require.Equal(t, http.StatusGone, rec.Code, rec.Body.String())

	audit := decode(t, e.do(t, http.MethodGet, "/v1/audit", adminToken, nil))
	require.NotEmpty(t, audit["entries"])
	require.Greater(t, audit["next_after"], 0.0)
}

func TestWiredListPagesWithCursors(t *testing.T) {
	t.Parallel()
	e := newWiredEnv(t)
	for _, name := range []string{"a", "b", "c"} {
		rec := e.do(t, http.MethodPost, "/v1/runs", operatorToken, map[string]any{"config": config(name)})
		require.Equal(t, http.StatusAccepted, rec.Code, rec.Body.String())
	}
	var names []string
	path := "/v1/runs?limit=2"
	for range 3 {
		page := decode(t, e.do(t, http.MethodGet, path, viewerToken, nil))
		for _, r := range page["runs"].([]any) {
			names = append(names, r.(map[string]any)["name"].(string))
		}
		next, ok := page["next_cursor"].(string)
		if !ok {
			break
		}
		path = "/v1/runs?limit=2&cursor=" + next
	}
	require.Equal(t, []string{"c", "b", "a"}, names, "newest first, every run once")

	rec := e.do(t, http.MethodGet, "/v1/runs?cursor=!!", viewerToken, nil)
	require.Equal(t, http.StatusBadRequest, rec.Code)
}

func TestWiredRefusals(t *testing.T) {
	t.Parallel()
	e := newWiredEnv(t)
	rec := e.do(t, http.MethodPost, "/v1/runs", operatorToken, map[string]any{"config": "version: 1\nname: x\npipeline:\n  source: { type: nope }\n"})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	code, _, details := errorOf(t, rec)
	require.Equal(t, "invalid_config", code)
	require.NotEmpty(t, details["errors"])

	refused := strings.Replace(config("x"), "${env:USER_DB}", "${env:SLUICE_VAULT_KEY}", 1)
	rec = e.do(t, http.MethodPost, "/v1/runs", operatorToken, map[string]any{"config": refused})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	code, _, _ = errorOf(t, rec)
	require.Equal(t, "directive_refused", code)

	rec = e.do(t, http.MethodPost, "/v1/runs", operatorToken, map[string]any{"config": config("x"), "pool": "gpu"})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	code, _, _ = errorOf(t, rec)
	require.Equal(t, "pool_unserved", code)

	rec = e.do(t, http.MethodPost, "/v1/runs", operatorToken, map[string]any{"config": config("x"),
		"callback": map[string]any{"url": "http://169.254.169.254/latest"}})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code, rec.Body.String())
	code, _, details = errorOf(t, rec)
	require.Equal(t, "invalid_config", code)
	require.Equal(t, "callback.url", details["errors"].([]any)[0].(map[string]any)["path"])

	conns := decode(t, e.do(t, http.MethodGet, "/v1/connectors", viewerToken, nil))["connectors"].([]any)
	require.NotEmpty(t, conns)
}
