package e2e_test

import (
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/e2e"
	"github.com/sluicehq/sluice/tests/testdb"
)

// retriedRun is the part of GET /v1/runs/{id} a retry shows (SPEC §14.5).
type retriedRun struct {
	Status    string  `json:"status"`
	NotBefore *string `json:"not_before"`
	Retry     *struct {
		MaxAttempts int    `json:"max_attempts"`
		On          string `json:"on"`
	} `json:"retry"`
	Attempts []struct {
		N          int    `json:"n"`
		InstanceID string `json:"instance_id"`
		Outcome    string `json:"outcome"`
		Error      *struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	} `json:"attempts"`
	Stats struct {
		RowsWritten int64 `json:"rows_written"`
	} `json:"stats"`
}

// flakySource fills src with ids 1..n and a function that fails the read at row failAt
// while the glitches sequence has not passed fails: each attempt that reaches the row
// spends one glitch, so exactly the first fails attempts fail, after the pages before
// the row were written. The read has no ORDER BY, so it streams the table in its stable
// heap order (a sort would meet the glitch before the first row); no row of it is ever
// changed, so every attempt reads the same order.
func flakySource(t *testing.T, s *pgSchema, n, failAt, fails int) {
	t.Helper()
	s.exec(t, fmt.Sprintf(`CREATE TABLE src AS SELECT g::bigint AS id, 'name-' || g AS name FROM generate_series(1, %d) g`, n))
	s.exec(t, `CREATE SEQUENCE glitches`)
	s.exec(t, fmt.Sprintf(`CREATE FUNCTION flaky(i bigint) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	IF i = %d AND nextval('glitches') <= %d THEN RAISE EXCEPTION 'upstream glitch %%', currval('glitches'); END IF;
	RETURN true;
END $$`, failAt, fails))
}

func flakyConfig(name, on string) string {
	return fmt.Sprintf(`version: 1
name: %s
delivery: exactly_once
retry: {max_attempts: 4, initial_secs: 0.4, max_secs: 2, on: %s}
pipeline:
  source: {type: postgres, config: {connection_url: "${env:SRC_URL}", query: "SELECT id, name FROM src WHERE flaky(id)", batch_size: 100}}
  sink: {type: postgres, config: {connection_url: "${env:DST_URL}", table_name: dst}}
`, name, on)
}

// TestRunRetriesAFlakySourceThenCompletes: a run whose source fails twice mid-read is
// retried with backoff and completes; the sink's watermark keeps every row to one copy,
// and the run resource shows the policy and why each failed attempt failed. A config
// that retries only transient failures does not retry this one.
func TestRunRetriesAFlakySourceThenCompletes(t *testing.T) {
	t.Parallel()
	const rows = 5000
	src, dst := newPGSchema(t), newPGSchema(t)
	flakySource(t, src, rows, 4001, 2)
	dst.exec(t, `CREATE TABLE dst (id bigint, name text)`) // no key: a second copy would stay
	s := startServe(t, t.TempDir(), map[string]string{"SRC_URL": src.url, "DST_URL": dst.url})

	id := s.submit(t, map[string]any{"config": flakyConfig("flaky-any", "any")})
	var r retriedRun
	require.Eventually(t, func() bool {
		require.Equal(t, http.StatusOK, s.api(t, "GET", "/v1/runs/"+id, nil, &r))
		return r.Status == "completed" || r.Status == "failed" || r.Status == "cancelled"
	}, 2*time.Minute, 50*time.Millisecond, "the run never ended:\n%s", s.Stderr())
	require.Equal(t, "completed", r.Status, "%+v\n%s", r, s.Stderr())
	require.NotNil(t, r.Retry)
	require.Equal(t, 4, r.Retry.MaxAttempts)
	require.Nil(t, r.NotBefore, "a run that is not waiting has no not_before")
	require.Len(t, r.Attempts, 3)
	for i, a := range r.Attempts[:2] {
		require.Equal(t, "failed", a.Outcome, "attempt %d", i+1)
		require.NotNil(t, a.Error, "attempt %d shows its error", i+1)
		require.Equal(t, "pipeline_error", a.Error.Code)
		require.Contains(t, a.Error.Message, fmt.Sprintf("upstream glitch %d", i+1))
	}
	require.Equal(t, "completed", r.Attempts[2].Outcome)
	require.Nil(t, r.Attempts[2].Error)
	require.Equal(t, int64(rows), dst.int(t, "SELECT count(*) FROM dst"), "every row once across the attempts")
	require.Equal(t, int64(rows), dst.int(t, "SELECT count(DISTINCT id) FROM dst"))
	require.Less(t, r.Stats.RowsWritten, int64(rows), "the last attempt resumed where the failed ones stopped")

	code, metrics := s.call(t, "GET", "/metrics", "", nil)
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, string(metrics), `sluice_serve_run_retries_total{pipeline="flaky-any"} 2`)

	// on: transient: the glitch is not marked transient, so the run fails at once.
	src.exec(t, `ALTER SEQUENCE glitches RESTART`)
	dst.exec(t, `DROP TABLE dst; DROP TABLE sluice_watermarks; CREATE TABLE dst (id bigint, name text)`)
	id = s.submit(t, map[string]any{"config": flakyConfig("flaky-transient", "transient")})
	final := s.waitStatus(t, id, "failed", 2*time.Minute)
	require.Len(t, final.Attempts, 1, "%+v", final)
	require.Equal(t, "pipeline_error", final.Error.Code)
}

// TestClusterRetryOutlivesItsMember: a member that retried a run is killed while the run
// waits for its backoff; the run stays pending in the history and the other member
// claims it once it is due and completes it.
func TestClusterRetryOutlivesItsMember(t *testing.T) {
	t.Parallel()
	const rows = 1000
	src, dst := newPGSchema(t), newPGSchema(t)
	flakySource(t, src, rows, 501, 1)
	dst.exec(t, `CREATE TABLE dst (id bigint, name text)`)
	cfg := clusterConfig(testdb.Postgres(t), 3)
	cfg.Env = map[string]string{"SRC_URL": src.url, "DST_URL": dst.url}
	c := e2e.StartCluster(t, 2, cfg, nil)
	c.WaitInstances(t, 2, time.Minute)

	id := c.Members[0].MustSubmit(t, e2e.SubmitRequest{Config: `version: 1
name: flaky-cluster
delivery: exactly_once
retry: {max_attempts: 3, initial_secs: 6, max_secs: 6, on: any}
pipeline:
  source: {type: postgres, config: {connection_url: "${env:SRC_URL}", query: "SELECT id, name FROM src WHERE flaky(id)", batch_size: 100}}
  sink: {type: postgres, config: {connection_url: "${env:DST_URL}", table_name: dst}}
`})
	// The first attempt fails; the run waits 3 to 6 s for its retry.
	var waiting retriedRun
	require.Eventually(t, func() bool {
		code := c.Members[0].MustDo(t, http.MethodGet, "/v1/runs/"+id, nil, &waiting)
		return code == http.StatusOK && waiting.Status == "pending" && waiting.NotBefore != nil
	}, time.Minute, 20*time.Millisecond, "the run never waited for a retry")
	require.Len(t, waiting.Attempts, 1)
	require.Equal(t, "failed", waiting.Attempts[0].Outcome)
	require.Contains(t, waiting.Attempts[0].Error.Message, "upstream glitch 1")
	first := waiting.Attempts[0].InstanceID

	var killed, survivor *e2e.Member
	for _, m := range c.Members {
		if m.InstanceID(t) == first {
			killed = m
		} else {
			survivor = m
		}
	}
	require.NotNil(t, killed)
	require.NotNil(t, survivor)
	killed.Kill(t)

	final := survivor.WaitRun(t, id, 2*time.Minute, "terminal", terminal)
	require.Equal(t, "completed", final.Status, "%+v", final)
	require.Equal(t, []string{"failed", "completed"}, final.Outcomes())
	require.Equal(t, survivor.InstanceID(t), final.Attempts[1].InstanceID)
	require.Equal(t, int64(rows), dst.int(t, "SELECT count(*) FROM dst"))
	require.Equal(t, int64(rows), dst.int(t, "SELECT count(DISTINCT id) FROM dst"))
}
