package e2e_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/e2e"
	"github.com/sluicehq/sluice/tests/testdb"
)

// TestClusterLostFinishIsNotWrittenTwice: an exactly-once run's sink commits the end of
// a full read, but the finish never reaches the history (the member's history link is
// down and then the member is frozen), so the lease expires and a peer executes the run
// again. The peer must find the read delivered and add nothing: every row once.
//
// The moment is made deterministic with a gate in the source query: the last row waits
// for an advisory lock the test holds. With the run parked there, the test cuts the
// member's history connection, opens the gate, waits until the sink's watermark records
// the run as complete, and only then stops the member (SIGSTOP).
func TestClusterLostFinishIsNotWrittenTwice(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rows := e2e.Rows(t, 100000)
	src, dst := newPGSchema(t), newPGSchema(t)
	gate := rand.Int64N(1 << 31)
	src.exec(t, fmt.Sprintf(`CREATE TABLE src AS SELECT g::bigint AS id, 'name-' || g AS name FROM generate_series(1, %d) g`, rows))
	src.exec(t, fmt.Sprintf(`CREATE FUNCTION gate(i bigint) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	IF i = %d THEN PERFORM pg_advisory_lock_shared(%d); PERFORM pg_advisory_unlock_shared(%d); END IF;
	RETURN true;
END $$`, rows, gate, gate))
	dst.exec(t, `CREATE TABLE dst (id bigint, name text)`) // no key: a second copy would stay
	src.exec(t, fmt.Sprintf(`SELECT pg_advisory_lock(%d)`, gate))

	history := testdb.Postgres(t)
	proxy := e2e.NewProxy(t, e2e.ProxyTarget(t, history))
	// With a 9 s TTL the cut member stops its runs 6 s after its last renewal: the pages
	// left after the gate opens have at least 3 s to commit.
	cfg := clusterConfig(proxy.URL(t, history), 9)
	cfg.Env = map[string]string{"SRC_URL": src.url, "DST_URL": dst.url}
	c := e2e.StartCluster(t, 1, cfg, nil)
	m0 := c.Members[0]
	id := m0.MustSubmit(t, e2e.SubmitRequest{Config: `version: 1
name: lost-finish
delivery: exactly_once
pipeline:
  source: {type: postgres, config: {connection_url: "${env:SRC_URL}", query: "SELECT id, name FROM src WHERE gate(id)", batch_size: 500}}
  sink: {type: postgres, config: {connection_url: "${env:DST_URL}", table_name: dst}}
`})
	m0.WaitRun(t, id, 30*time.Second, "running on m0", runningOn(m0.InstanceID(t)))
	require.Eventually(t, func() bool {
		var n int64
		err := src.conn.QueryRow(ctx, `SELECT count(*) FROM pg_locks
WHERE locktype = 'advisory' AND NOT granted AND objid::bigint = $1 AND objsubid = 1`, gate).Scan(&n)
		return err == nil && n > 0
	}, time.Minute, 10*time.Millisecond, "the read never reached its last row:\n%s", m0.Stderr())
	// The sink may lag the source by many pages on a loaded machine: the cut must come
	// only when every page before the gated one is committed, so that one page is left
	// for the cut member to write before its cutoff (else the peer finishes the read,
	// rightly, and the test proves nothing).
	var epoch int64
	require.Eventually(t, func() bool {
		err := dst.conn.QueryRow(ctx, `SELECT epoch FROM sluice_watermarks WHERE rows_after = $1`, (rows-1)/500*500).Scan(&epoch)
		return err == nil
	}, time.Minute, 10*time.Millisecond, "the sink never caught up with the gate:\n%s", m0.Stderr())
	m1 := c.Add(t, func(cfg *e2e.MemberConfig) { cfg.History = history })

	proxy.Cut()
	cut := time.Now()
	src.exec(t, fmt.Sprintf(`SELECT pg_advisory_unlock(%d)`, gate))
	// Every row is there and the position went back to zero: the commit of the read's end.
	require.Eventually(t, func() bool {
		var n int64
		err := dst.conn.QueryRow(ctx, `SELECT count(*) FROM sluice_watermarks
WHERE rows_after = 0 AND (SELECT count(*) FROM dst) = $1`, rows).Scan(&n)
		return err == nil && n == 1
	}, 30*time.Second, 5*time.Millisecond, "the sink never committed the end of the read:\n%s", m0.Stderr())
	m0.Pause(t)
	t.Logf("the end of the read committed %s after the cut (the outage cutoff is 6 s)", time.Since(cut).Round(time.Millisecond))
	require.Equal(t, int64(1), dst.int(t, fmt.Sprintf(`SELECT count(*) FROM sluice_watermarks WHERE completed_by = '%s' AND epoch = %d`, id, epoch)),
		"the watermark records the run that completed the read, and the cut member's epoch (no peer fenced it first)")

	final := m1.WaitRun(t, id, time.Minute, "terminal", terminal)
	require.Equal(t, "completed", final.Status, "%+v", final)
	require.Equal(t, []string{"lost", "completed"}, final.Outcomes())
	require.Equal(t, m0.InstanceID(t), final.Attempts[0].InstanceID)
	require.Equal(t, m1.InstanceID(t), final.Attempts[1].InstanceID)
	require.Zero(t, final.Stats.RowsWritten, "the peer's re-execution writes nothing")
	require.Equal(t, int64(rows), dst.int(t, "SELECT count(*) FROM dst"), "every row exactly once")
	require.Equal(t, int64(rows), dst.int(t, "SELECT count(DISTINCT id) FROM dst"))
	requireNoOverlap(t, final)
	var said bool
	for _, l := range m1.Logs() {
		said = said || (l.RunID == id && strings.Contains(l.Msg, "already delivered by this run"))
	}
	require.True(t, said, "the peer says why it wrote nothing:\n%s", m1.Stderr())

	// Awake and reconnected, the first member's late finish is refused: nothing changes.
	m0.Resume(t)
	proxy.Restore()
	require.Eventually(t, func() bool { return m0.InFlight() == 0 }, 30*time.Second, 50*time.Millisecond)
	again := m1.GetRun(t, id)
	require.Equal(t, "completed", again.Status)
	require.Equal(t, final.Outcomes(), again.Outcomes())
	require.Equal(t, int64(rows), dst.int(t, "SELECT count(*) FROM dst"))
}
