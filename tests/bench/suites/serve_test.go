package suites

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"
)

func TestServeCases(t *testing.T) {
	t.Parallel()
	two := serveCases(2, true)
	require.Len(t, two, 8, "2 histories × 2 sinks × {2, 8} slots")
	require.Equal(t, serveCase{History: "sqlite", Sink: "stdout", Slots: 2}, two[0])
	require.Equal(t, serveCase{History: "postgres", Sink: "sqlite", Slots: 8}, two[7])

	eight := serveCases(8, false)
	require.Len(t, eight, 2, "8 CPUs: no second slot count; no PostgreSQL URL: SQLite only")
	for _, c := range eight {
		require.Equal(t, "sqlite", c.History)
		require.Equal(t, 8, c.Slots)
	}
}

func TestFilterServeCases(t *testing.T) {
	t.Parallel()
	all := serveCases(2, true)
	require.Len(t, filterServeCases(all, ""), 8, "no list keeps every case")
	got := filterServeCases(serveCases(2, true), "postgres-stdout-8, sqlite-sqlite-2")
	require.Equal(t, []serveCase{{History: "sqlite", Sink: "sqlite", Slots: 2}, {History: "postgres", Sink: "stdout", Slots: 8}}, got)
	require.Empty(t, filterServeCases(serveCases(2, true), "nope"))
}

func TestServePercentile(t *testing.T) {
	t.Parallel()
	var ds []time.Duration
	for i := 100; i >= 1; i-- {
		ds = append(ds, time.Duration(i)*time.Millisecond)
	}
	require.Equal(t, 50*time.Millisecond, servePercentile(ds, 50))
	require.Equal(t, 99*time.Millisecond, servePercentile(ds, 99))
	require.Equal(t, 100*time.Millisecond, servePercentile(ds, 100))
	require.Equal(t, time.Millisecond, servePercentile(ds, 0))
	require.Zero(t, servePercentile(nil, 50))
	require.Equal(t, 100*time.Millisecond, ds[0], "the input is not sorted in place")
}

func TestServeMS(t *testing.T) {
	t.Parallel()
	require.Equal(t, "0.8 ms", serveMS(800*time.Microsecond))
	require.Equal(t, "9.9 ms", serveMS(9940*time.Microsecond))
	require.Equal(t, "20 ms", serveMS(20*time.Millisecond))
	require.Equal(t, "5361 ms", serveMS(5361*time.Millisecond))
}

func TestSummarize(t *testing.T) {
	t.Parallel()
	first := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	at := func(ms int) *time.Time { t := first.Add(time.Duration(ms) * time.Millisecond); return &t }
	var runs []serveRun
	require.NoError(t, json.Unmarshal([]byte(`[
 {"run_id":"a","status":"completed","created_at":"2025-01-01T00:00:00.010Z","claimed_at":"2025-01-01T00:00:00.015Z","finished_at":"2025-01-01T00:00:00.020Z"},
 {"run_id":"b","status":"failed","created_at":"2025-01-01T00:00:00.010Z","claimed_at":"2025-01-01T00:00:00.040Z","finished_at":"2025-01-01T00:00:02.000Z",
  "error":{"code":"source_failed","message":"boom"}},
 {"run_id":"c","status":"cancelled","created_at":"2025-01-01T00:00:00.010Z","claimed_at":null,"finished_at":"2025-01-01T00:00:00.500Z"}]`), &runs))
	r := summarize(runs, first)
	require.Equal(t, 3, r.Total)
	require.Equal(t, 1, r.Completed)
	require.Equal(t, 2, r.Failed)
	require.Equal(t, "failed: source_failed boom", r.FirstFailure)
	require.Equal(t, 2*time.Second, r.Wall, "first submission to the last finished_at")
	require.Equal(t, []time.Duration{5 * time.Millisecond, 30 * time.Millisecond}, r.Pickup, "unclaimed runs have no pickup")
	require.InDelta(t, 1.5, r.runsPerSec(), 1e-9)
	require.Equal(t, *at(20), *runs[0].FinishedAt)

	require.Zero(t, summarize(nil, first).runsPerSec(), "no runs, no speed")
}

func TestServeRow(t *testing.T) {
	t.Parallel()
	ms := func(n int) []time.Duration { return []time.Duration{time.Duration(n) * time.Millisecond} }
	pg := serveCase{History: "postgres", Sink: "stdout", Slots: 2}
	ok := serveResult{Total: serveRuns, Completed: serveRuns, Wall: 2 * time.Second, Submit: ms(3),
		Pickup: ms(30), Idle: ms(5), PeakRSSKiB: 40 * 1024}
	row := serveRow(pg, ok, nil)
	require.Equal(t, []string{"PostgreSQL", "generate 1 row → stdout", "2", "1,000 (2.00 s)", "3.0 ms / 3.0 ms",
		"30 ms / 30 ms", "5.0 ms / 5.0 ms", "2,000 of 2,000", "40.0 MiB", "runs/s met, pickup MISSED (idle met)"}, row)

	sq := serveCase{History: "sqlite", Sink: "sqlite", Slots: 8}
	require.Equal(t, "pickup met (idle met)", serveRow(sq, serveResult{Pickup: ms(1), Idle: ms(1)}, nil)[9],
		"runs/s has a target on PostgreSQL only")

	refused := ok
	refused.Refused, refused.FirstRefusal, refused.Completed = 3, "503 database is locked", serveRuns-3
	require.Equal(t, "FAILED: 3 submissions refused (first: 503 database is locked)", serveRow(sq, refused, nil)[7])

	failed := ok
	failed.Completed, failed.Failed, failed.FirstFailure = serveRuns-2, 2, "failed: boom"
	require.Equal(t, "FAILED: 2 not completed (first: failed: boom)", serveRow(sq, failed, nil)[7])

	broken := serveRow(sq, serveResult{}, errTest("sluice serve exited while starting"))
	require.Len(t, broken, 10, "a failed case still fills every column")
	require.Equal(t, "FAILED: sluice serve exited while starting", broken[3])
}

type errTest string

func (e errTest) Error() string { return string(e) }

func TestServeBody(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, sink := range []string{"stdout", "sqlite"} {
		b, err := serveBody(sink, dir, 7)
		require.NoError(t, err)
		var body struct{ Config string }
		require.NoError(t, json.Unmarshal(b, &body))
		var cfg struct {
			Version  int
			Pipeline struct {
				Source, Sink struct {
					Type   string
					Config map[string]any
				}
			}
		}
		require.NoError(t, yaml.Unmarshal([]byte(body.Config), &cfg), body.Config)
		require.Equal(t, 1, cfg.Version)
		require.Equal(t, "generate", cfg.Pipeline.Source.Type)
		require.Equal(t, 1, cfg.Pipeline.Source.Config["count"])
		require.Equal(t, sink, cfg.Pipeline.Sink.Type)
		if sink == "sqlite" {
			require.Equal(t, "sqlite:"+filepath.Join(dir, "files", "out-7.db"), cfg.Pipeline.Sink.Config["connection_url"],
				"one absolute file per run: the server does not run in the config's directory")
		}
	}
}

func TestServeRunTerminal(t *testing.T) {
	t.Parallel()
	for st, want := range map[string]bool{"completed": true, "failed": true, "cancelled": true,
		"pending": false, "queued": false, "running": false, "sharded": false} {
		require.Equal(t, want, serveRun{Status: st}.terminal(), st)
	}
}

func TestClusterParts(t *testing.T) {
	t.Parallel()
	require.Equal(t, map[string]bool{"burn": true, "latency": true, "failover": true}, clusterParts(""))
	require.Equal(t, map[string]bool{"burn": true}, clusterParts("burn, nope"))
}
