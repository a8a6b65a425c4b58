package postgres_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors"
	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/adapters/connectors/postgres"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/state"
)

func fencedSink(t *testing.T, cfg map[string]any) execute.FencedSink {
	t.Helper()
	return conntest.Fenced(t, postgres.New(), execute.WriteRequest{Config: cfg})
}

func numbered(from, to int64) *execute.Page {
	return conntest.Numbered(from, to)
}

func TestOlderWriterIsFenced(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, `CREATE TABLE t (id bigint)`)
	cfg := map[string]any{"connection_url": d.url, "table_name": "t"}
	ctx := context.Background()

	a := fencedSink(t, cfg)
	wm, err := a.Fence(ctx, "_/orders")
	require.NoError(t, err)
	require.Equal(t, execute.Watermark{Epoch: 1}, wm, "a new key starts at epoch 1 with nothing delivered")
	require.NoError(t, a.WriteAt(ctx, numbered(1, 3), execute.Position{Rows: 3}))

	b := fencedSink(t, cfg)
	wm, err = b.Fence(ctx, "_/orders")
	require.NoError(t, err)
	require.Equal(t, execute.Watermark{Epoch: 2, Position: execute.Position{Rows: 3}}, wm,
		"the newer writer reads the position the older one committed")

	err = a.WriteAt(ctx, numbered(4, 6), execute.Position{Rows: 6})
	require.ErrorIs(t, err, run.ErrLeaseLost)
	require.ErrorContains(t, err, `watermark "_/orders": epoch 1 was taken by a newer writer`)
	require.NoError(t, a.Abort(ctx))
	require.Equal(t, [][]any{{int64(1)}, {int64(2)}, {int64(3)}}, d.rows(t, "SELECT id FROM t ORDER BY id"),
		"the refused page left nothing")

	require.NoError(t, b.WriteAt(ctx, numbered(4, 5), execute.Position{Rows: 5}))
	mark := &state.Bookmark{Cursor: "id", Value: int64(5)}
	require.NoError(t, b.CommitAt(ctx, execute.Position{Bookmark: mark}))
	require.Equal(t, [][]any{{"_/orders", int64(2), `{"v":2,"cursor":"id","value":5}`, int64(0)}},
		d.rows(t, "SELECT state_key, epoch, bookmark, rows_after FROM sluice_watermarks"))

	// A stale commit is refused too.
	c := fencedSink(t, cfg)
	_, err = c.Fence(ctx, "_/orders")
	require.NoError(t, err)
	stale := fencedSink(t, cfg)
	_, err = stale.Fence(ctx, "other-key")
	require.NoError(t, err, "keys fence independently")
	require.NoError(t, c.CommitAt(ctx, execute.Position{}))
	require.NoError(t, stale.Abort(ctx))
}

func TestFencedOverwriteRollsBackWhenFenced(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, `CREATE TABLE t (id bigint)`)
	d.exec(t, `INSERT INTO t VALUES (100)`)
	cfg := map[string]any{"connection_url": d.url, "table_name": "t", "write_mode": "overwrite", "watermark_table": "wm"}
	ctx := context.Background()
	a := fencedSink(t, cfg)
	_, err := a.Fence(ctx, "k")
	require.NoError(t, err)
	require.NoError(t, a.WriteAt(ctx, numbered(1, 2), execute.Position{Rows: 2}))

	// The newer writer fences while the older one's transaction is open: it does not wait.
	b := fencedSink(t, map[string]any{"connection_url": d.url, "table_name": "t", "watermark_table": "wm"})
	_, err = b.Fence(ctx, "k")
	require.NoError(t, err)
	require.NoError(t, b.Abort(ctx))

	require.ErrorIs(t, a.CommitAt(ctx, execute.Position{}), run.ErrLeaseLost)
	require.Equal(t, [][]any{{int64(100)}}, d.rows(t, "SELECT id FROM t"), "the old contents stay")
}

func TestWritersStartingTogetherGetDistinctEpochs(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, `CREATE TABLE t (id bigint)`)
	cfg := map[string]any{"connection_url": d.url, "table_name": "t"}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		epochs = map[int64]bool{}
	)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := postgres.New().OpenSink(context.Background(), execute.WriteRequest{Config: cfg})
			if err != nil {
				t.Error(err)
				return
			}
			defer s.Abort(context.Background())
			wm, err := s.(execute.FencedSink).Fence(context.Background(), "k")
			if err != nil {
				t.Errorf("fence: %v", err)
				return
			}
			mu.Lock()
			epochs[wm.Epoch] = true
			mu.Unlock()
		}()
	}
	wg.Wait()
	require.Equal(t, map[int64]bool{1: true, 2: true, 3: true, 4: true}, epochs)
}

// logged records log messages.
type logged struct {
	mu   sync.Mutex
	msgs []string
}

func (l *logged) Enabled(context.Context, slog.Level) bool { return true }
func (l *logged) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.msgs = append(l.msgs, r.Message)
	return nil
}
func (l *logged) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logged) WithGroup(string) slog.Handler      { return l }
func (l *logged) has(s string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.msgs {
		if strings.Contains(m, s) {
			return true
		}
	}
	return false
}

func job(src, snk map[string]any, mutate ...func(*pipeline.Config)) execute.Job {
	cfg := &pipeline.Config{Version: 1, Name: "pg", Replication: pipeline.Replication{Type: pipeline.Full},
		Source: pipeline.Connector{Type: "postgres", Config: src},
		Sink:   pipeline.Connector{Type: "postgres", Config: snk}}
	for _, m := range mutate {
		m(cfg)
	}
	return execute.Job{Config: cfg, StateKey: "_/pg"}
}

func exactlyOnce(c *pipeline.Config) { c.Delivery = pipeline.ExactlyOnce }

func TestExactlyOnceResumeAfterStop(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, `CREATE TABLE src AS SELECT g AS id, 'n' || g AS name FROM generate_series(1, 1000) g`)
	d.exec(t, `CREATE TABLE dst (id bigint, name text)`)
	ex := &execute.Executor{Registry: connectors.New(postgres.New())}
	src := map[string]any{"connection_url": d.url, "query": "SELECT * FROM src ORDER BY id", "batch_size": int64(100)}
	snk := map[string]any{"connection_url": d.url, "table_name": "dst"}

	// The first writer stops after 3 pages, as a killed one would, but keeps its watermark.
	ctx, cancel := context.WithCancel(context.Background())
	j := job(src, snk, exactlyOnce)
	j.Progress = func(s execute.Stats) {
		if s.Pages == 3 {
			cancel()
		}
	}
	_, err := ex.Run(ctx, j)
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, [][]any{{int64(300)}}, d.rows(t, "SELECT count(*) FROM dst"))

	log := &logged{}
	j = job(src, snk, exactlyOnce)
	j.Log = slog.New(log)
	stats, err := ex.Run(context.Background(), j)
	require.NoError(t, err)
	require.Equal(t, int64(700), stats.RowsWritten)
	require.Equal(t, [][]any{{int64(1000), int64(1000)}}, d.rows(t, "SELECT count(*), count(DISTINCT id) FROM dst"))
	require.False(t, log.has("pass through"), "dropping delivered rows needs decoded pages")

	// Finished: the next run copies everything again, this time passed through.
	log = &logged{}
	j = job(src, snk, exactlyOnce)
	j.Log = slog.New(log)
	_, err = ex.Run(context.Background(), j)
	require.NoError(t, err)
	require.True(t, log.has("pass through"))
	require.Equal(t, [][]any{{int64(2000), int64(1000)}}, d.rows(t, "SELECT count(*), count(DISTINCT id) FROM dst"))
	require.Equal(t, [][]any{{int64(3), int64(0)}}, d.rows(t, "SELECT epoch, rows_after FROM sluice_watermarks"))
}

func TestExactlyOnceIncremental(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, `CREATE TABLE src (id int, c int)`)
	d.exec(t, `INSERT INTO src SELECT g, g / 4 FROM generate_series(1, 50) g`)
	d.exec(t, `CREATE TABLE dst (id int, c int)`)
	ex := &execute.Executor{Registry: connectors.New(postgres.New())}
	src := map[string]any{"connection_url": d.url, "query": "SELECT * FROM src", "batch_size": int64(3)}
	snk := map[string]any{"connection_url": d.url, "table_name": "dst"}
	incr := func(c *pipeline.Config) {
		c.Replication = pipeline.Replication{Type: pipeline.Incremental, Cursor: "c"}
	}
	for _, stopAt := range []int64{2, 5, 0} {
		ctx, cancel := context.WithCancel(context.Background())
		j := job(src, snk, exactlyOnce, incr)
		j.Progress = func(s execute.Stats) {
			if s.Pages == stopAt {
				cancel()
			}
		}
		_, err := ex.Run(ctx, j)
		cancel()
		if stopAt != 0 {
			require.ErrorIs(t, err, context.Canceled)
		} else {
			require.NoError(t, err)
		}
	}
	require.Equal(t, [][]any{{int64(50), int64(50)}}, d.rows(t, "SELECT count(*), count(DISTINCT id) FROM dst"),
		"ties at page edges are never split, so nothing is written twice")
	d.exec(t, `INSERT INTO src SELECT g, g FROM generate_series(51, 60) g`) // new rows come with newer cursor values
	_, err := ex.Run(context.Background(), job(src, snk, exactlyOnce, incr))
	require.NoError(t, err)
	require.Equal(t, [][]any{{int64(60), int64(60)}}, d.rows(t, "SELECT count(*), count(DISTINCT id) FROM dst"))
}

func TestPassthroughCreatesTableWithSourceTypes(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, `CREATE TABLE src (id int PRIMARY KEY, amount numeric(12,2), tags text[], doc jsonb)`)
	d.exec(t, `INSERT INTO src VALUES (1, 10.50, '{a,"b c"}', '{"x": 1}'), (2, NULL, NULL, NULL)`)
	ex := &execute.Executor{Registry: connectors.New(postgres.New())}
	log := &logged{}
	j := job(map[string]any{"connection_url": d.url, "query": "SELECT * FROM src"},
		map[string]any{"connection_url": d.url, "table_name": "copy", "create_table": true, "key": []any{"id"}, "write_mode": "upsert"})
	j.Log = slog.New(log)
	for range 2 {
		_, err := ex.Run(context.Background(), j)
		require.NoError(t, err)
	}
	require.True(t, log.has("pass through"))
	require.Equal(t, d.rows(t, "SELECT s::text FROM src s ORDER BY id"), d.rows(t, "SELECT s::text FROM copy s ORDER BY id"))
	require.Equal(t, [][]any{{"integer"}, {"numeric(12,2)"}, {"text[]"}, {"jsonb"}},
		d.rows(t, `SELECT format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = 'copy'::regclass AND attnum > 0 ORDER BY attnum`))
}

func TestWatermarkTableOfAnEarlierVersionIsUpgraded(t *testing.T) {
	t.Parallel()
	d := newDB(t)
	d.exec(t, `CREATE TABLE t (id bigint)`)
	d.exec(t, `CREATE TABLE sluice_watermarks (state_key text PRIMARY KEY, epoch bigint NOT NULL, bookmark text,
	rows_after bigint NOT NULL DEFAULT 0, updated_at timestamptz NOT NULL DEFAULT now())`)
	d.exec(t, `INSERT INTO sluice_watermarks (state_key, epoch, rows_after) VALUES ('_/old', 3, 7)`)
	conntest.WatermarkUpgrade(t, func(t *testing.T) execute.FencedSink {
		return fencedSink(t, map[string]any{"connection_url": d.url, "table_name": "t"})
	})
}
