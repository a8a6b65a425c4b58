package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/e2e"
	"github.com/sluicehq/sluice/tests/testdb"
)

// Cluster Mode B end to end (SPEC §6): three `sluice serve --cluster` members on one
// PostgreSQL history split a PostgreSQL → PostgreSQL upsert into 8 key-range shards.

// shardedConfig copies src into dst by upsert, split count ways by the column key.
func shardedConfig(name, query, key string, count int) string {
	return fmt.Sprintf(`version: 1
name: %s
shard: {count: %d}
pipeline:
  source:
    type: postgres
    config: {connection_url: "${env:SRC_URL}", query: %q, shard: {key: %s}, batch_size: 1000}
  sink:
    type: postgres
    config: {connection_url: "${env:DST_URL}", table_name: dst, write_mode: upsert, key: [id]}
`, name, count, query, key)
}

// shardCluster starts three members that can reach the source and sink databases.
func shardCluster(t *testing.T, src, dst *pgSchema, ttl int) *e2e.Cluster {
	t.Helper()
	cfg := clusterConfig(testdb.Postgres(t), ttl)
	cfg.Env = map[string]string{"SRC_URL": src.url, "DST_URL": dst.url}
	return e2e.StartCluster(t, 3, cfg, nil)
}

// slowShardTables makes src with rows that take about total to read (slowSource) and an
// empty dst keyed by id, in two schemas.
func slowShardTables(t *testing.T, rows int, total time.Duration) (src, dst *pgSchema) {
	t.Helper()
	src, dst = newPGSchema(t), newPGSchema(t)
	slowSource(t, src, rows, total)
	dst.exec(t, `CREATE TABLE dst (id bigint PRIMARY KEY, name text, amount numeric, at timestamptz)`)
	return src, dst
}

// requireExactCopy checks dst holds every row of src exactly once, unchanged.
func requireExactCopy(t *testing.T, src, dst *pgSchema, rows int) {
	t.Helper()
	require.Equal(t, int64(rows), src.int(t, "SELECT count(*) FROM src"))
	require.Equal(t, int64(rows), dst.int(t, "SELECT count(*) FROM dst"))
	require.Equal(t, int64(rows), dst.int(t, "SELECT count(DISTINCT id) FROM dst"))
	require.Zero(t, dst.int(t, "SELECT count(*) FROM dst WHERE name <> 'name-' || id"), "values arrive unchanged")
}

// A table sharded 8 ways over three members lands in the sink exactly once, NULL keys
// included, and the run ends completed with its shards counted.
func TestShardedRunAcrossThreeMembers(t *testing.T) {
	t.Parallel()
	rows := e2e.Rows(t, 100000)
	src, dst := newPGSchema(t), newPGSchema(t)
	// Every 97th row has a NULL shard key: exactly one shard reads those.
	src.exec(t, fmt.Sprintf(`CREATE TABLE src AS SELECT g::bigint AS id,
		CASE WHEN g %% 97 = 0 THEN NULL ELSE g * 3 END AS k, 'name-' || g AS name
		FROM generate_series(1, %d) g`, rows))
	dst.exec(t, `CREATE TABLE dst (id bigint PRIMARY KEY, k bigint, name text)`)
	c := shardCluster(t, src, dst, 5)

	start := time.Now()
	id := c.Members[1].MustSubmit(t, e2e.SubmitRequest{Config: shardedConfig("sharded-copy", "SELECT id, k, name FROM src", "k", 8)})
	r := c.WaitTerminal(t, []string{id}, 3*time.Minute)[id]
	t.Logf("%d rows in 8 shards over 3 members: %s", rows, time.Since(start).Round(time.Millisecond))
	require.Equal(t, "completed", r.Status, "%+v", r.Error)
	require.NotNil(t, r.Shards)
	require.Equal(t, e2e.ShardCounts{Total: 8, Completed: 8}, *r.Shards)
	require.Equal(t, int64(rows), r.Stats.RowsWritten)
	requireExactCopy(t, src, dst, rows)
	require.Equal(t, float64(8), membersSum(t, c.Members, "sluice_serve_shards_claimed_total"), "each shard is claimed once")
	require.Len(t, r.Attempts, 1)
	require.Equal(t, "completed", *r.Attempts[0].Outcome)

	// A sharded run into a file sink is refused at submit, saying what to change.
	status, out := c.Members[0].Submit(t, e2e.SubmitRequest{Config: `version: 1
name: sharded-file
shard: {count: 4}
pipeline:
  source: {type: postgres, config: {connection_url: "${env:SRC_URL}", query: "SELECT id FROM src", shard: {key: id}}}
  sink: {type: file, config: {path: never-written.csv}}
`})
	require.Equal(t, 422, status)
	require.Equal(t, "shard_refused", out.Error.Code)
	require.Contains(t, out.Error.Message, "write to a SQL sink or remove shard")
}

// A member killed while it executes shards: their leases expire, peers reclaim and run
// them again, and the sink still ends with every row exactly once.
func TestShardedRunSurvivesKill(t *testing.T) {
	t.Parallel()
	rows := e2e.Rows(t, 100000)
	src, dst := slowShardTables(t, rows, 20*time.Second)
	c := shardCluster(t, src, dst, 3)

	id := c.Members[1].MustSubmit(t, e2e.SubmitRequest{Config: shardedConfig("sharded-kill",
		"SELECT id, name, amount, at FROM src WHERE slow(id)", "id", 8)})
	// Kill the owner of a running shard, as GET /v1/runs/{id}/shards names it.
	var victim *e2e.Member
	held := -1
	require.Eventually(t, func() bool {
		for _, sh := range shardsOf(t, c.Members[1], id) {
			if sh.Status == "running" && sh.Owner != nil {
				victim, held = c.ByInstance(t, sh.Owner.InstanceID), sh.Index
				return victim != nil
			}
		}
		return false
	}, time.Minute, 10*time.Millisecond, "some member executes a shard")
	victim.Kill(t)

	living := []*e2e.Member{}
	for _, m := range c.Members {
		if m != victim {
			living = append(living, m)
		}
	}
	c.Members = living // WaitTerminal asks the living
	r := c.WaitTerminal(t, []string{id}, 3*time.Minute)[id]
	require.Equal(t, "completed", r.Status, "%+v", r.Error)
	require.Equal(t, e2e.ShardCounts{Total: 8, Completed: 8}, *r.Shards)
	requireExactCopy(t, src, dst, rows)
	// A member counts a reclaimed shard just after the reclaim commits, so the count may
	// trail the run's end: wait for it.
	require.Eventually(t, func() bool {
		return membersSum(t, c.Members, "sluice_serve_shards_reclaimed_total", `outcome="requeued"`) > 0
	}, time.Minute, 20*time.Millisecond, "the killed member's shards were reclaimed")
	for _, sh := range shardsOf(t, c.Members[0], id) {
		if sh.Index == held {
			require.Equal(t, 2, sh.Attempt, "shard %d ran again after the kill", held)
		}
	}
}

// shardItem is one entry of GET /v1/runs/{id}/shards.
type shardItem struct {
	Index   int    `json:"index"`
	Status  string `json:"status"`
	Attempt int    `json:"attempt"`
	Owner   *struct {
		InstanceID string `json:"instance_id"`
	} `json:"owner"`
	Error *e2e.APIError `json:"error"`
}

func shardsOf(t *testing.T, m *e2e.Member, id string) []shardItem {
	t.Helper()
	var page struct {
		Shards []shardItem `json:"shards"`
	}
	require.Equal(t, 200, m.MustDo(t, "GET", "/v1/runs/"+id+"/shards", nil, &page))
	return page.Shards
}

// Cancel of a sharded run ends it cancelled: pending shards at once, running ones at a
// page boundary.
func TestShardedRunCancel(t *testing.T) {
	t.Parallel()
	rows := e2e.Rows(t, 100000)
	src, dst := slowShardTables(t, rows, 20*time.Second)
	c := shardCluster(t, src, dst, 5)

	m := c.Members[2]
	id := m.MustSubmit(t, e2e.SubmitRequest{Config: shardedConfig("sharded-cancel",
		"SELECT id, name, amount, at FROM src WHERE slow(id)", "id", 16)})
	m.WaitRun(t, id, time.Minute, "sharded with shards running", func(r e2e.RunResource) bool {
		return r.Status == "sharded" && r.Shards != nil && r.Shards.Running > 0 && r.Shards.Pending > 0
	})
	require.Contains(t, []int{200, 202}, m.Cancel(t, id))
	r := c.WaitTerminal(t, []string{id}, time.Minute)[id]
	require.Equal(t, "cancelled", r.Status)
	require.Equal(t, 16, r.Shards.Total)
	require.Zero(t, r.Shards.Pending+r.Shards.Running)
	require.Positive(t, r.Shards.Cancelled)
	require.Less(t, dst.int(t, "SELECT count(*) FROM dst"), int64(rows), "the cancel stopped the copy")
}

// A glob of 20 CSV files sharded 4 ways by path hash lands in a keyed sink once each.
func TestShardedFileGlob(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const files, perFile = 20, 50
	for f := range files {
		var b strings.Builder
		b.WriteString("id,name\n")
		for i := range perFile {
			id := f*perFile + i + 1
			fmt.Fprintf(&b, "%d,name-%d\n", id, id)
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-%02d.csv", f)), []byte(b.String()), 0o600))
	}
	src, dst := newPGSchema(t), newPGSchema(t)
	dst.exec(t, `CREATE TABLE dst (id text PRIMARY KEY, name text)`)
	c := shardCluster(t, src, dst, 5)

	id := c.Members[0].MustSubmit(t, e2e.SubmitRequest{Config: fmt.Sprintf(`version: 1
name: sharded-files
shard: {count: 4}
pipeline:
  source: {type: file, config: {path: %q, batch_size: 20}}
  sink: {type: postgres, config: {connection_url: "${env:DST_URL}", table_name: dst, write_mode: upsert, key: [id]}}
`, filepath.Join(dir, "part-*.csv"))})
	r := c.WaitTerminal(t, []string{id}, 2*time.Minute)[id]
	require.Equal(t, "completed", r.Status, "%+v", r.Error)
	require.Equal(t, e2e.ShardCounts{Total: 4, Completed: 4}, *r.Shards)
	require.Equal(t, int64(files*perFile), r.Stats.RowsRead, "each file is read by exactly one shard")
	require.Equal(t, int64(files*perFile), dst.int(t, "SELECT count(*) FROM dst"))
	require.Zero(t, dst.int(t, "SELECT count(*) FROM dst WHERE name <> 'name-' || id"))
}

// A single server started on the history of a cluster that died mid-run holds the
// history lock, so the shards left running there have no other owner: it takes them
// back at once instead of waiting out their leases, and finishes the run.
func TestSingleServerFinishesTheShardsACrashedClusterLeft(t *testing.T) {
	t.Parallel()
	const ttl = 90 // seconds: far longer than the test may wait
	rows := e2e.Rows(t, 20000)
	src, dst := slowShardTables(t, rows, 8*time.Second)
	history := testdb.Postgres(t)
	cfg := clusterConfig(history, ttl)
	cfg.Env = map[string]string{"SRC_URL": src.url, "DST_URL": dst.url}
	c := e2e.StartCluster(t, 1, cfg, nil)
	m := c.Members[0]
	id := m.MustSubmit(t, e2e.SubmitRequest{Config: shardedConfig("orphaned-shards",
		"SELECT id, name, amount, at FROM src WHERE slow(id)", "id", 4)})
	m.WaitRun(t, id, time.Minute, "every shard running", func(r e2e.RunResource) bool {
		return r.Status == "sharded" && r.Shards != nil && r.Shards.Running == 4
	})
	m.Kill(t)
	m.Wait(t)

	single := e2e.StartMember(t, "single", e2e.MemberConfig{History: history, PollSecs: 1, MaxConcurrent: 4,
		Env: cfg.Env, Timeout: 3 * time.Minute})
	r := single.WaitRun(t, id, 45*time.Second, "finished well before the dead member's leases expire", terminal)
	require.Equal(t, "completed", r.Status, "%+v", r.Error)
	require.Equal(t, e2e.ShardCounts{Total: 4, Completed: 4}, *r.Shards)
	requireExactCopy(t, src, dst, rows)
	for _, sh := range shardsOf(t, single, id) {
		require.Equal(t, 2, sh.Attempt, "shard %d ran again on the single server", sh.Index)
	}
	awaitMetric(t, 4, func() float64 {
		return metricSum(single.Metrics(t), "sluice_serve_shards_reclaimed_total", `outcome="requeued"`)
	}, "sluice_serve_shards_reclaimed_total counts each of the dead member's shards once")
}

// timeout_secs bounds each shard's running time (SPEC §3, §6.1): every shard of a run
// that outlives it stops at a page boundary and fails with timeout, and the run fails
// with shard_failed naming how many.
func TestShardedRunTimeout(t *testing.T) {
	t.Parallel()
	rows := e2e.Rows(t, 40000)
	src, dst := slowShardTables(t, rows, 60*time.Second)
	cfg := clusterConfig(testdb.Postgres(t), 5)
	cfg.Env = map[string]string{"SRC_URL": src.url, "DST_URL": dst.url}
	c := e2e.StartCluster(t, 2, cfg, nil)

	id := c.Members[0].MustSubmit(t, e2e.SubmitRequest{TimeoutSecs: 2, Config: shardedConfig("sharded-timeout",
		"SELECT id, name, amount, at FROM src WHERE slow(id)", "id", 4)})
	start := time.Now()
	r := c.WaitTerminal(t, []string{id}, time.Minute)[id]
	t.Logf("ended %s after %s: %+v", r.Status, time.Since(start).Round(time.Millisecond), r.Error)
	require.Equal(t, "failed", r.Status)
	require.NotNil(t, r.Error)
	require.Equal(t, "shard_failed", r.Error.Code, r.Error.Message)
	require.Equal(t, "4 of 4 shards failed", r.Error.Message)
	require.Equal(t, e2e.ShardCounts{Total: 4, Failed: 4}, *r.Shards)
	for _, sh := range shardsOf(t, c.Members[1], id) {
		require.NotNil(t, sh.Error, "shard %d", sh.Index)
		require.Equal(t, "timeout", sh.Error.Code, "shard %d", sh.Index)
	}
}
