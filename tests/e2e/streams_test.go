package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/tests/e2e"
	"github.com/sluicehq/sluice/tests/testdb"
)

// TestClusterKafkaToPostgresExactlyOnceSurvivesKill: a Kafka → PostgreSQL run with
// delivery exactly_once keeps its per-partition offsets in the sink's watermark, in the
// transaction of each page. The member executing it is killed (SIGKILL) in the middle of
// a page's transaction; a peer reclaims the run once the lease expires and resumes from
// the watermark, so every (partition, offset) of the topic is a row exactly once.
//
// The moment is deterministic: once half the rows are in, the sink table's trigger waits
// for an advisory lock the test holds, so the member is killed while a page's
// transaction is open.
func TestClusterKafkaToPostgresExactlyOnceSurvivesKill(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rows := e2e.Rows(t, 100000) / 5
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "events"))
	require.NoError(t, err)
	t.Cleanup(kc.Close)
	produceEvents(t, kc.ListenAddrs(), rows)

	dst := newPGSchema(t)
	gate := rand.Int64N(1 << 31)
	dst.exec(t, `CREATE TABLE dst (key text, value text, "partition" bigint, "offset" bigint, "timestamp" timestamptz, headers jsonb)`)
	dst.exec(t, fmt.Sprintf(`CREATE FUNCTION gate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF (SELECT count(*) FROM dst) >= %d THEN PERFORM pg_advisory_lock_shared(%d); PERFORM pg_advisory_unlock_shared(%d); END IF;
	RETURN NULL;
END $$`, rows/2, gate, gate))
	dst.exec(t, `CREATE TRIGGER gate BEFORE INSERT ON dst FOR EACH STATEMENT EXECUTE FUNCTION gate()`)
	dst.exec(t, fmt.Sprintf(`SELECT pg_advisory_lock(%d)`, gate))

	cfg := clusterConfig(testdb.Postgres(t), 5)
	cfg.Env = map[string]string{"KAFKA": kc.ListenAddrs()[0], "DST_URL": dst.url}
	c := e2e.StartCluster(t, 2, cfg, nil)
	id := c.Members[0].MustSubmit(t, e2e.SubmitRequest{Config: `version: 1
name: kafka-exactly-once
delivery: exactly_once
replication: {type: incremental, cursor: offset}
pipeline:
  source: {type: kafka, config: {brokers: ["${env:KAFKA}"], topic: events, format: raw, batch_size: 500}}
  sink: {type: postgres, config: {connection_url: "${env:DST_URL}", table_name: dst}}
`})
	require.Eventually(t, func() bool {
		var n int64
		err := dst.conn.QueryRow(ctx, `SELECT count(*) FROM pg_locks
WHERE locktype = 'advisory' AND NOT granted AND objid::bigint = $1 AND objsubid = 1`, gate).Scan(&n)
		return err == nil && n > 0
	}, 2*time.Minute, 10*time.Millisecond, "the run never reached half of the topic")
	r, ok := c.Get(id)
	require.True(t, ok)
	require.NotNil(t, r.Owner)
	victim := c.ByInstance(t, r.Owner.InstanceID)
	require.NotNil(t, victim)
	written := dst.int(t, "SELECT count(*) FROM dst")
	require.Positive(t, written)
	require.Less(t, written, int64(rows))
	victim.Kill(t)
	dst.exec(t, fmt.Sprintf(`SELECT pg_advisory_unlock(%d)`, gate))

	var peer *e2e.Member
	for _, m := range c.Members {
		if m != victim {
			peer = m
		}
	}
	final := peer.WaitRun(t, id, 2*time.Minute, "terminal", terminal)
	require.Equal(t, "completed", final.Status, "%+v\n%s", final, peer.Stderr())
	require.Equal(t, []string{"lost", "completed"}, final.Outcomes())
	requireNoOverlap(t, final)
	require.Equal(t, int64(rows), dst.int(t, "SELECT count(*) FROM dst"), "every message is a row")
	require.Equal(t, int64(rows), dst.int(t, `SELECT count(DISTINCT ("partition", "offset")) FROM dst`), "each offset exactly once")
	require.Equal(t, int64(rows), dst.int(t, "SELECT count(DISTINCT value) FROM dst"))
	require.Less(t, final.Stats.RowsWritten, int64(rows), "the peer resumed from the watermark instead of starting over")
}

// produceEvents writes n JSON messages round-robin over the topic's partitions.
func produceEvents(t *testing.T, brokers []string, n int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic("events"),
		kgo.RecordPartitioner(kgo.RoundRobinPartitioner()))
	require.NoError(t, err)
	defer cl.Close()
	const chunk = 5000
	for from := 0; from < n; from += chunk {
		var recs []*kgo.Record
		for i := from; i < min(from+chunk, n); i++ {
			recs = append(recs, &kgo.Record{Value: []byte(fmt.Sprintf(`{"id":%d}`, i+1))})
		}
		require.NoError(t, cl.ProduceSync(context.Background(), recs...).FirstErr())
	}
}

// pagedAPI is a JSON API over ids 1..n in pages of size, answering ?since=X with the
// ids above X; scripted failures come first.
type pagedAPI struct {
	mu       sync.Mutex
	n, size  int
	failures []int
	served   map[string]int // page query → times answered with records
	srv      *httptest.Server
}

func newPagedAPI(t *testing.T, n, size int, failures ...int) *pagedAPI {
	a := &pagedAPI{n: n, size: size, failures: failures, served: map[string]int{}}
	a.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a.mu.Lock()
		defer a.mu.Unlock()
		if len(a.failures) > 0 {
			status := a.failures[0]
			a.failures = a.failures[1:]
			if status == http.StatusTooManyRequests {
				w.Header().Set("Retry-After", "1")
			}
			w.WriteHeader(status)
			return
		}
		since, _ := strconv.Atoi(r.URL.Query().Get("since"))
		page, _ := strconv.Atoi(r.URL.Query().Get("page"))
		var items []map[string]any
		for id := since + (page-1)*a.size + 1; id <= min(since+page*a.size, a.n); id++ {
			items = append(items, map[string]any{"id": id, "name": "item " + strconv.Itoa(id)})
		}
		if len(items) > 0 {
			a.served[r.URL.RawQuery]++
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"data": items})
	}))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *pagedAPI) grow(n int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n = n
}

func (a *pagedAPI) answers() map[string]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]int{}
	for k, v := range a.served {
		out[k] = v
	}
	return out
}

func httpConfig(url string, incremental bool) string {
	repl := ""
	if incremental {
		repl = "replication: {type: incremental, cursor: id}\n"
	}
	return `version: 1
name: api-copy
` + repl + `pipeline:
  source:
    type: http
    config:
      url: "` + url + `/items"
      headers: {Authorization: "Bearer ${env:API_TOKEN}"}
      records_path: data
      pagination: {type: page, size_param: size, size: 10}
      cursor_param: since
      retry: {attempts: 5, initial_secs: 0.05, max_secs: 5}
  sink: {type: file, config: {path: out.jsonl}}
`
}

func jsonlIDs(t *testing.T, path string) []int {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	var ids []int
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if line == "" {
			continue
		}
		var o struct{ ID int }
		require.NoError(t, json.Unmarshal([]byte(line), &o))
		ids = append(ids, o.ID)
	}
	return ids
}

func seqInts(from, to int) []int {
	var out []int
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

// TestHTTPSourceSurvivesRateLimitsAndServerErrors: the API answers two 429s (with
// Retry-After) and a 503 before its first page; `sluice run` retries them and writes
// every record of every page once to JSONL, asking for each page once.
func TestHTTPSourceSurvivesRateLimitsAndServerErrors(t *testing.T) {
	t.Parallel()
	api := newPagedAPI(t, 45, 10, http.StatusTooManyRequests, http.StatusTooManyRequests, http.StatusServiceUnavailable)
	dir := t.TempDir()
	path := filepath.Join(dir, "api.yaml")
	require.NoError(t, os.WriteFile(path, []byte(httpConfig(api.srv.URL, false)), 0o600))
	res := e2e.Run(t, e2e.Cmd{Args: []string{"run", "--quiet", "--json", "--data-dir", dir, path}, Dir: dir,
		Env: map[string]string{"API_TOKEN": "tok-secret-123"}})
	require.Equal(t, 0, res.Code, res.String())
	require.Equal(t, int64(45), parseRun(t, res).Stats.RowsWritten)
	require.Equal(t, seqInts(1, 45), jsonlIDs(t, filepath.Join(dir, "out.jsonl")))
	require.Equal(t, map[string]int{"page=1&size=10": 1, "page=2&size=10": 1, "page=3&size=10": 1, "page=4&size=10": 1, "page=5&size=10": 1},
		api.answers(), "every page is asked for once")
	require.NotContains(t, res.Stderr+res.Stdout, "tok-secret-123")
}

// TestHTTPIncrementalReadsOnlyNewRecords: a second incremental run sends the bookmark as
// cursor_param and writes only the records added since.
func TestHTTPIncrementalReadsOnlyNewRecords(t *testing.T) {
	t.Parallel()
	api := newPagedAPI(t, 23, 10)
	dir := t.TempDir()
	path := filepath.Join(dir, "api.yaml")
	require.NoError(t, os.WriteFile(path, []byte(httpConfig(api.srv.URL, true)), 0o600))
	cmd := e2e.Cmd{Args: []string{"run", "--quiet", "--json", "--data-dir", dir, path}, Dir: dir,
		Env: map[string]string{"API_TOKEN": "t"}}
	res := e2e.Run(t, cmd)
	require.Equal(t, 0, res.Code, res.String())
	require.Equal(t, seqInts(1, 23), jsonlIDs(t, filepath.Join(dir, "out.jsonl")))

	api.grow(30)
	res = e2e.Run(t, cmd)
	require.Equal(t, 0, res.Code, res.String())
	out := parseRun(t, res)
	require.Equal(t, int64(7), out.Stats.RowsRead, "only the records past the bookmark are read")
	require.Equal(t, seqInts(1, 30), jsonlIDs(t, filepath.Join(dir, "out.jsonl")), "appended: each record once")
	require.Equal(t, 1, api.answers()["page=1&since=23&size=10"], "the bookmark went to the API as since=23")
}

// TestKafkaJSONLinesPassThrough: `sluice run` Kafka → JSONL and JSONL → Kafka pass the
// JSON objects through as lines (no decoding into rows): every message is a line once,
// partition after partition in offset order, and copied back every line is a message.
func TestKafkaJSONLinesPassThrough(t *testing.T) {
	t.Parallel()
	kc, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "events", "copy"))
	require.NoError(t, err)
	t.Cleanup(kc.Close)
	const n = 3000
	produceEvents(t, kc.ListenAddrs(), n)
	dir := t.TempDir()
	run := func(name, source, sink string) {
		t.Helper()
		path := filepath.Join(dir, name+".yaml")
		cfg := fmt.Sprintf("version: 1\nname: %s\npipeline:\n  source: %s\n  sink: %s\n", name, source, sink)
		require.NoError(t, os.WriteFile(path, []byte(cfg), 0o600))
		res := e2e.Run(t, e2e.Cmd{Args: []string{"run", "--json", "--data-dir", dir, path}, Dir: dir,
			Env: map[string]string{"KAFKA": kc.ListenAddrs()[0]}})
		require.Equal(t, 0, res.Code, res.String())
		require.Equal(t, int64(n), parseRun(t, res).Stats.RowsWritten)
		require.Contains(t, res.Stderr, `"msg":"rows pass through without conversion","format":"json-lines"`)
	}
	run("out", `{type: kafka, config: {brokers: ["${env:KAFKA}"], topic: events, batch_size: 700}}`, `{type: file, config: {path: out.jsonl}}`)
	var want []int
	for p := range 3 { // round-robin: id i+1 went to partition i mod 3
		for i := p; i < n; i += 3 {
			want = append(want, i+1)
		}
	}
	require.Equal(t, want, jsonlIDs(t, filepath.Join(dir, "out.jsonl")), "partition after partition, each in offset order")

	run("back", `{type: file, config: {path: out.jsonl}}`, `{type: kafka, config: {brokers: ["${env:KAFKA}"], topic: copy}}`)
	cl, err := kgo.NewClient(kgo.SeedBrokers(kc.ListenAddrs()...), kgo.ConsumeTopics("copy"),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableFetchSessions()) // see the kafka source
	require.NoError(t, err)
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	seen := map[string]int{}
	for len(seen) < n && ctx.Err() == nil {
		cl.PollFetches(ctx).EachRecord(func(r *kgo.Record) { seen[string(r.Value)]++ })
	}
	require.Len(t, seen, n)
	for i := 1; i <= n; i++ {
		require.Equal(t, 1, seen[fmt.Sprintf(`{"id":%d}`, i)], "id %d is one message, as written", i)
	}
}
