package e2e_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/e2e"
	"github.com/sluicehq/sluice/tests/testdb"
)

// (a) Defaults: a generated token in the data directory, and the exclusive lock.
func TestServeDefaultsWriteTokenAndLockTheHistory(t *testing.T) {
	t.Parallel()
	data := filepath.Join(t.TempDir(), "data")
	first := startServe(t, data, nil)

	tokenFile := filepath.Join(data, "auth-token")
	fi, err := os.Stat(tokenFile)
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	require.Len(t, first.token, 64)
	require.Contains(t, first.Stderr(), tokenFile, "serve says where the token is")
	require.NotContains(t, first.Stderr(), first.token, "and never prints the token")
	_, err = os.Stat(filepath.Join(data, "history.db"))
	require.NoError(t, err, "the default history is SQLite in the data directory")

	var ready struct {
		Cluster struct {
			Members []struct {
				InstanceID string `json:"instance_id"`
			} `json:"members"`
		} `json:"cluster"`
	}
	require.Equal(t, http.StatusOK, first.api(t, "GET", "/readyz", nil, &ready))
	require.Len(t, ready.Cluster.Members, 1)
	id := ready.Cluster.Members[0].InstanceID

	second := e2e.Run(t, e2e.Cmd{Args: []string{"serve", "--listen", freeAddr(t), "--data-dir", data}, Timeout: time.Minute})
	require.Equal(t, 1, second.Code, second.String())
	host, err := os.Hostname()
	require.NoError(t, err)
	for _, want := range []string{id, host, fmt.Sprintf("pid %d", first.Pid())} {
		require.Contains(t, second.Stderr, want, "the refusal names the holder")
	}
	code, _ := first.call(t, "GET", "/readyz", "", nil)
	require.Equal(t, http.StatusOK, code, "the first server is undisturbed")
	first.stop(t)
}

// (b) Submit through the CLI and raw HTTP; list, get and logs.
func TestServeSubmitThroughCLIAndHTTP(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	s := startServe(t, data, nil)

	cliDB := filepath.Join(dir, "cli.db")
	cfg := filepath.Join(dir, "cli.yaml")
	require.NoError(t, os.WriteFile(cfg, []byte(generateConfig("via-cli", cliDB, 2500, 0, 500, "")), 0o600))
	r := e2e.Run(t, e2e.Cmd{Args: []string{"runs", "submit", cfg, "--wait", "--label", "via=cli", "--server", s.url(), "--data-dir", data}})
	require.Equal(t, 0, r.Code, r.String())
	require.Contains(t, r.Stdout, "completed")
	require.Equal(t, 2500, tableCount(t, cliDB))

	httpDB := filepath.Join(dir, "http.db")
	id := s.submit(t, map[string]any{"config": generateConfig("via-http", httpDB, 1200, 0, 400, ""),
		"labels": map[string]string{"via": "http"}})
	run := s.waitStatus(t, id, "completed", 30*time.Second)
	require.Equal(t, int64(1200), run.Stats.RowsWritten)
	require.Equal(t, int64(3), run.Stats.Pages)
	require.Equal(t, 1, run.Attempt)
	require.Equal(t, "http", run.Labels["via"])
	require.Equal(t, 1200, tableCount(t, httpDB))

	var list struct {
		Runs []runResource `json:"runs"`
	}
	require.Equal(t, http.StatusOK, s.api(t, "GET", "/v1/runs", nil, &list))
	names := map[string]string{}
	for _, r := range list.Runs {
		names[r.Name] = r.Status
	}
	require.Equal(t, map[string]string{"via-cli": "completed", "via-http": "completed"}, names)
	require.Equal(t, http.StatusOK, s.api(t, "GET", "/v1/runs?label=via=http", nil, &list))
	require.Len(t, list.Runs, 1)
	require.Equal(t, id, list.Runs[0].RunID)

	var logs struct {
		Lines []struct {
			Level   string `json:"level"`
			Message string `json:"message"`
		} `json:"lines"`
	}
	require.Eventually(t, func() bool {
		require.Equal(t, http.StatusOK, s.api(t, "GET", "/v1/runs/"+id+"/logs", nil, &logs))
		return len(logs.Lines) > 0
	}, time.Minute, 50*time.Millisecond, "run logs are persisted")

	r = e2e.Run(t, e2e.Cmd{Args: []string{"runs", "list", "--json", "--server", s.url(), "--data-dir", data}})
	require.Equal(t, 0, r.Code, r.String())
	require.Contains(t, r.Stdout, id)
	s.stop(t)
}

// (c) Refusals: auth, roles, body limit, invalid configs, callbacks to metadata addresses.
func TestServeRefusesBadRequests(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	auth := filepath.Join(dir, "principals.yaml")
	require.NoError(t, os.WriteFile(auth, []byte(`- {name: ops, token: operator-secret-1, role: operator}
- {name: watcher, token: viewer-secret-1, role: viewer}
`), 0o600))
	s := startServe(t, filepath.Join(dir, "data"), nil, "--auth-config", auth, "--body-limit-bytes", "4096", "--history", "memory")
	good := generateConfig("ok", filepath.Join(dir, "out.db"), 10, 0, 10, "")
	body := func(v any) []byte { b, _ := json.Marshal(v); return b }
	decode := func(raw []byte) apiError {
		var e apiError
		require.NoError(t, json.Unmarshal(raw, &e), string(raw))
		return e
	}

	code, raw := s.call(t, "GET", "/v1/runs", "", nil)
	require.Equal(t, http.StatusUnauthorized, code)
	require.Equal(t, "unauthorized", decode(raw).Error.Code)
	code, _ = s.call(t, "GET", "/v1/runs", "wrong-token-123", nil)
	require.Equal(t, http.StatusUnauthorized, code)

	code, _ = s.call(t, "GET", "/v1/runs", "viewer-secret-1", nil)
	require.Equal(t, http.StatusOK, code, "a viewer may list")
	code, raw = s.call(t, "POST", "/v1/runs", "viewer-secret-1", body(map[string]any{"config": good}))
	require.Equal(t, http.StatusForbidden, code)
	require.Equal(t, "forbidden", decode(raw).Error.Code)

	big := body(map[string]any{"config": good + "# " + strings.Repeat("x", 5000) + "\n"})
	code, raw = s.call(t, "POST", "/v1/runs", "operator-secret-1", big)
	require.Equal(t, http.StatusRequestEntityTooLarge, code)
	require.Equal(t, "body_too_large", decode(raw).Error.Code)

	bad := strings.Replace(good, "batch_size", "batch_sise", 1)
	code, raw = s.call(t, "POST", "/v1/runs", "operator-secret-1", body(map[string]any{"config": bad}))
	require.Equal(t, http.StatusUnprocessableEntity, code, string(raw))
	e := decode(raw)
	require.Equal(t, "invalid_config", e.Error.Code)
	var paths []string
	for _, fe := range e.Error.Details.Errors {
		paths = append(paths, fe.Path)
	}
	require.Contains(t, paths, "pipeline.source.config.batch_sise")

	code, raw = s.call(t, "POST", "/v1/runs", "operator-secret-1", body(map[string]any{"config": good,
		"callback": map[string]any{"url": "http://169.254.169.254/latest/meta-data"}}))
	require.Equal(t, http.StatusUnprocessableEntity, code, string(raw))
	require.Contains(t, string(raw), "169.254.169.254")
	require.Contains(t, string(raw), "callback.url")

	code, raw = s.call(t, "POST", "/v1/runs", "operator-secret-1", body(map[string]any{"config": good}))
	require.Equal(t, http.StatusAccepted, code, string(raw))
	require.NotContains(t, s.Stderr(), "operator-secret-1", "tokens never reach the log")
	s.stop(t)
}

// (d) Cancelling a running run stops it at a page boundary; confirmed pages stay.
func TestServeCancelStopsAtPageBoundary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServe(t, filepath.Join(dir, "data"), nil)
	db := filepath.Join(dir, "slow.db")
	const count, batch = 1000000, 100
	id := s.submit(t, map[string]any{"config": generateConfig("slow", db, count, 2000, batch, "")})
	require.Eventually(t, func() bool { return tableCount(t, db) > 0 }, 30*time.Second, 50*time.Millisecond)

	var out runResource
	code := s.api(t, "POST", "/v1/runs/"+id+"/cancel", nil, &out)
	require.Contains(t, []int{http.StatusOK, http.StatusAccepted}, code)
	run := s.waitStatus(t, id, "cancelled", 30*time.Second)
	n := tableCount(t, db)
	require.Positive(t, n)
	require.Less(t, n, count)
	require.Zero(t, n%batch, "only whole confirmed pages are in the table")
	require.Equal(t, int64(n), run.Stats.RowsWritten)
	s.stop(t)
}

// (e) SIGTERM drains: the running run is handed back without spending an attempt, and
// the restarted server finishes it from its bookmark with the history intact.
func TestServeDrainHandsBackAndRestartResumes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	args := []string{"--shutdown-grace-secs", "2", "--shutdown-kill-secs", "10"}
	s := startServe(t, data, nil, args...)

	quick := s.submit(t, map[string]any{"config": generateConfig("quick", filepath.Join(dir, "quick.db"), 100, 0, 50, "")})
	s.waitStatus(t, quick, "completed", 30*time.Second)

	db := filepath.Join(dir, "long.db")
	const count = 16000
	incremental := "replication: { type: incremental, cursor: id }\n"
	long := s.submit(t, map[string]any{"config": generateConfig("long", db, count, 4000, 200, incremental)})
	require.Eventually(t, func() bool { return tableCount(t, db) > 0 }, 30*time.Second, 25*time.Millisecond)

	s.Signal(t, syscall.SIGTERM)
	// While the grace runs: not ready, submissions refused, reads still answered.
	require.Eventually(t, func() bool {
		code, raw := s.call(t, "GET", "/readyz", "", nil)
		return code == http.StatusServiceUnavailable && strings.Contains(string(raw), `"draining":true`)
	}, 30*time.Second, 20*time.Millisecond)
	code, raw := s.call(t, "POST", "/v1/runs", s.token, []byte(`{"config": "version: 1"}`))
	require.Equal(t, http.StatusServiceUnavailable, code, string(raw))
	require.Contains(t, string(raw), `"draining"`)
	require.Equal(t, "running", s.get(t, long).Status, "GETs still work while draining")

	r := s.Wait(t)
	require.Equal(t, 0, r.Code, r.String())

	// Between the two processes, the history says pending with the attempt given back.
	var status, attempts string
	var attempt int
	require.NoError(t, openDB(t, filepath.Join(data, "history.db")).
		QueryRow(`SELECT status, attempt, attempts FROM sluice_runs WHERE id = ?`, long).Scan(&status, &attempt, &attempts))
	require.Equal(t, "pending", status)
	require.Equal(t, 0, attempt, "a hand-back spends no attempt")
	require.Contains(t, attempts, "handed_back")
	written := tableCount(t, db)
	require.Positive(t, written)
	require.Less(t, written, count)

	s = startServe(t, data, nil, args...)
	require.Equal(t, "completed", s.get(t, quick).Status, "earlier runs survive the restart")
	done := s.waitStatus(t, long, "completed", 60*time.Second)
	require.Equal(t, 1, done.Attempt)
	require.GreaterOrEqual(t, len(done.Attempts), 2)
	require.Equal(t, "handed_back", done.Attempts[0].Outcome)
	var distinct int
	require.NoError(t, openDB(t, db).QueryRow(`SELECT COUNT(DISTINCT id) FROM rows`).Scan(&distinct))
	require.Equal(t, count, distinct, "the resumed run wrote every row")
	require.Less(t, done.Stats.RowsRead, int64(count), "and read only what the first attempt had not confirmed")
	s.stop(t)
}

// A second signal skips what is left of a long grace: the run is handed back at once.
func TestServeSecondSignalSkipsGrace(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	// A grace of an hour: the process ends within the test only if the signal skipped it.
	s := startServe(t, data, nil, "--shutdown-grace-secs", "3600")
	db := filepath.Join(dir, "slow.db")
	id := s.submit(t, map[string]any{"config": generateConfig("slow", db, 1000000, 2000, 100, "")})
	require.Eventually(t, func() bool { return tableCount(t, db) > 0 }, 30*time.Second, 25*time.Millisecond)

	start := time.Now()
	s.Signal(t, syscall.SIGTERM)
	require.Eventually(t, func() bool {
		code, _ := s.call(t, "GET", "/readyz", "", nil)
		return code == http.StatusServiceUnavailable
	}, time.Minute, 20*time.Millisecond)
	s.Signal(t, syscall.SIGINT)
	r := s.Wait(t)
	require.Equal(t, 0, r.Code, r.String())
	t.Logf("the second signal ended the drain %s after the first", time.Since(start).Round(time.Millisecond))
	require.Contains(t, r.Stderr, "second signal")

	var status string
	require.NoError(t, openDB(t, filepath.Join(data, "history.db")).
		QueryRow(`SELECT status FROM sluice_runs WHERE id = ?`, id).Scan(&status))
	require.Equal(t, "pending", status)
}

// (f) A PostgreSQL history survives a restart.
func TestServePostgresHistorySurvivesRestart(t *testing.T) {
	t.Parallel()
	history := testdb.Postgres(t)
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	s := startServe(t, data, nil, "--history", history)
	id := s.submit(t, map[string]any{"config": generateConfig("pg-one", filepath.Join(dir, "one.db"), 500, 0, 100, "")})
	s.waitStatus(t, id, "completed", 30*time.Second)
	r := s.stop(t)
	require.NotContains(t, r.Stderr, "postgres:postgres@", "the history URL's credentials are not logged")

	s = startServe(t, data, nil, "--history", history)
	run := s.get(t, id)
	require.Equal(t, "completed", run.Status)
	require.Equal(t, int64(500), run.Stats.RowsWritten)
	second := s.submit(t, map[string]any{"config": generateConfig("pg-two", filepath.Join(dir, "two.db"), 300, 0, 100, "")})
	s.waitStatus(t, second, "completed", 30*time.Second)
	var list struct {
		Runs []runResource `json:"runs"`
	}
	require.Equal(t, http.StatusOK, s.api(t, "GET", "/v1/runs", nil, &list))
	require.Len(t, list.Runs, 2)
	s.stop(t)
}

// (g) A completion callback reaches a loopback receiver, signed with --callback-secret
// over timestamp.delivery.body; the receiver of the README accepts it once, and refuses
// the captured request replayed (same delivery id) or presented more than 5 minutes
// after its timestamp.
func TestServeCallbackIsSigned(t *testing.T) {
	t.Parallel()
	const secretKey = "callback-signing-key-1"
	type delivery struct {
		header http.Header
		body   []byte
	}
	var (
		mu   sync.Mutex
		got  []delivery
		seen = map[string]bool{}
		now  = time.Now // the receiver's clock; the replay below moves it
	)
	recv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		defer mu.Unlock()
		got = append(got, delivery{header: r.Header.Clone(), body: b})
		if err := verifyCallback([]byte(secretKey), r.Header, b, now(), seen); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(recv.Close)

	dir := t.TempDir()
	s := startServe(t, filepath.Join(dir, "data"), nil, "--callback-secret", secretKey, "--history", "memory")
	id := s.submit(t, map[string]any{
		"config":   generateConfig("cb", filepath.Join(dir, "cb.db"), 50, 0, 50, ""),
		"callback": map[string]any{"url": recv.URL + "/hook", "extra_fields": map[string]any{"team": "data"}},
	})
	s.waitStatus(t, id, "completed", 30*time.Second)
	require.Eventually(t, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0
	}, 20*time.Second, 50*time.Millisecond, "the callback was delivered")

	mu.Lock()
	d := got[0]
	require.Len(t, seen, 1, "the receiver verified the delivery")
	mu.Unlock()
	require.NotEmpty(t, d.header.Get("X-Sluice-Delivery"))
	var payload map[string]any
	require.NoError(t, json.Unmarshal(d.body, &payload))
	require.Equal(t, id, payload["run_id"])
	require.Equal(t, "completed", payload["status"])
	require.Equal(t, "cb", payload["name"])
	require.Equal(t, "data", payload["team"])
	require.NotContains(t, s.Stderr(), secretKey)
	s.stop(t)

	replay := func() int {
		req, err := http.NewRequest("POST", recv.URL+"/hook", bytes.NewReader(d.body))
		require.NoError(t, err)
		req.Header = d.header.Clone()
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		_ = resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusUnauthorized, replay(), "a delivery id is accepted once")
	mu.Lock()
	seen = map[string]bool{}                                          // even a receiver that forgot it…
	now = func() time.Time { return time.Now().Add(6 * time.Minute) } // …refuses it 6 minutes on
	mu.Unlock()
	require.Equal(t, http.StatusUnauthorized, replay(), "a delivery older than 5 minutes is refused")
	http.DefaultClient.CloseIdleConnections()
}

// verifyCallback is the README's receiver check: the signature covers
// timestamp.delivery.body, the timestamp is within 5 minutes of now, and a delivery id
// is accepted once (retries of one callback share it).
func verifyCallback(secret []byte, h http.Header, body []byte, now time.Time, seen map[string]bool) error {
	ts, id := h.Get("X-Sluice-Timestamp"), h.Get("X-Sluice-Delivery")
	mac := hmac.New(sha256.New, secret)
	mac.Write([]byte(ts + "." + id + "."))
	mac.Write(body)
	want := "sha256=" + hex.EncodeToString(mac.Sum(nil))
	if id == "" || !hmac.Equal([]byte(want), []byte(h.Get("X-Sluice-Signature"))) {
		return errors.New("bad signature")
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || now.Sub(time.Unix(sec, 0)).Abs() > 5*time.Minute {
		return errors.New("stale or missing timestamp")
	}
	if seen[id] {
		return errors.New("delivery already seen")
	}
	seen[id] = true
	return nil
}
