package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/tests/testdb"
)

func newRun(name string) *runs.Record {
	now := time.Now()
	return &runs.Record{ID: uuid.Must(uuid.NewV7()).String(), Name: name, Pool: "default", Status: "pending",
		TriggerKind: "api", RunDate: now.Format(time.DateOnly), MaxAttempts: 3, Config: "x", CreatedAt: now}
}

// listen subscribes a plain connection to channel.
func listen(t *testing.T, url, channel string) *pgx.Conn {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(ctx) })
	_, err = conn.Exec(ctx, "LISTEN "+channel)
	require.NoError(t, err)
	return conn
}

// next waits for the next notification; the timeout only keeps a lost one from hanging
// the test (nothing waits for a quiet period).
func next(t *testing.T, conn *pgx.Conn) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	n, err := conn.WaitForNotification(ctx)
	if err != nil {
		return "", false
	}
	return n.Payload, true
}

// workNotifies records, through the query hook, each work-channel NOTIFY the store sends.
type workNotifies struct {
	mu   sync.Mutex
	sent int
	more chan struct{} // a value per NOTIFY sent
}

func (w *workNotifies) hook(q string) {
	if strings.HasPrefix(q, "SELECT pg_notify") && strings.Contains(q, "sluice_work_") {
		w.mu.Lock()
		w.sent++
		w.mu.Unlock()
		w.more <- struct{}{}
	}
}

// await waits until n notifications were sent in all.
func (w *workNotifies) await(t *testing.T, n int) {
	t.Helper()
	for w.count() < n {
		select {
		case <-w.more:
		case <-time.After(time.Minute):
			t.Fatalf("%d notifications sent, waiting for %d", w.count(), n)
		}
	}
}

func (w *workNotifies) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sent
}

// openCountingWork opens a migrated PostgreSQL store whose work notifications are counted.
func openCountingWork(t *testing.T) (*store.Store, string, *workNotifies) {
	t.Helper()
	ctx := context.Background()
	url := testdb.Postgres(t)
	sent := &workNotifies{more: make(chan struct{}, 1000)}
	s, err := store.Open(ctx, url, store.Options{QueryHook: hookFunc(sent.hook)})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.Migrate(ctx))
	return s, url, sent
}

func TestPostgresNotifiesWorkAndCancels(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, url, sent := openCountingWork(t)
	require.Contains(t, s.WorkChannel(), s.Schema(), "channels are derived from the schema")
	require.NotEqual(t, s.WorkChannel(), s.CancelChannel())

	work := listen(t, url, s.WorkChannel())
	cancels := listen(t, url, s.CancelChannel())
	r := newRun("p")
	_, err := s.Create(ctx, r, nil)
	require.NoError(t, err)
	payload, ok := next(t, work)
	require.True(t, ok, "a new pending run wakes the claimers")
	require.Empty(t, payload)

	// The cancel goes out on its own channel, whose gap the work notifications above
	// do not touch: it is sent at once, whenever this claim comes.
	got, err := s.Claim(ctx, cluster.Owner{InstanceID: "m"}, []string{"default"}, 1, time.Minute)
	require.NoError(t, err)
	require.Len(t, got, 1)
	_, err = s.RequestCancel(ctx, r.ID)
	require.NoError(t, err)
	payload, ok = next(t, cancels)
	require.True(t, ok)
	require.Equal(t, r.ID, payload, "the cancel names the run")

	// A burst is folded: at most one notification per gap, and nothing is lost after the
	// last create — either its own transaction notified, or a trailing notification
	// goes out after it. Waited for as events (the hook), not as a quiet period.
	before := sent.count()
	burst := time.Now()
	var lastNotified bool
	var after int // notifications sent when the last create returned
	for range 10 {
		was := sent.count()
		_, err := s.Create(ctx, newRun("burst"), nil)
		require.NoError(t, err)
		after = sent.count()
		lastNotified = after > was
	}
	took := time.Since(burst)
	if !lastNotified {
		sent.await(t, after+1)
	}
	n := sent.count() - before
	require.GreaterOrEqual(t, n, 1)
	// At most one per 25 ms gap while the burst lasted, plus the trailing one after it.
	require.LessOrEqual(t, n, int(took/(25*time.Millisecond))+2, "burst took %s", took)
	for i := range n {
		_, ok := next(t, work)
		require.True(t, ok, "notification %d of %d sent was not received", i+1, n)
	}
}

func TestPollOnlySendsNoNotifications(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testdb.Postgres(t)
	s, err := store.Open(ctx, url, store.Options{PollOnly: true})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Migrate(ctx))
	require.Empty(t, s.WorkChannel())
	require.Empty(t, s.CancelChannel())
	var notifies int
	hooked, err := store.Open(ctx, url, store.Options{PollOnly: true, QueryHook: hookFunc(func(q string) {
		if len(q) >= 16 && q[:16] == "SELECT pg_notify" {
			notifies++
		}
	})})
	require.NoError(t, err)
	defer hooked.Close()
	_, err = hooked.Create(ctx, newRun("p"), nil)
	require.NoError(t, err)
	require.Zero(t, notifies)
}

// The end of a run is announced on the done channel only when a client follows the run
// (MarkFollowed): PostgreSQL lets one notifying transaction commit at a time, server-wide,
// and a cluster burning through runs nobody watched paid that lock with every finish.
// Every terminal path is tried unfollowed (a finish alone, a batch, a cancel while
// pending) before a followed run ends: its notification must be the first heard.
func TestPostgresAnnouncesTheEndOfFollowedRunsOnly(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testdb.Postgres(t)
	var mu sync.Mutex
	var doneSent int
	s, err := store.Open(ctx, url, store.Options{QueryHook: hookFunc(func(q string) {
		if strings.HasPrefix(q, "SELECT pg_notify") && strings.Contains(q, "sluice_done_") {
			mu.Lock()
			doneSent++
			mu.Unlock()
		}
	})})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Migrate(ctx))
	done := listen(t, url, s.DoneChannel())
	owner := cluster.Owner{InstanceID: "m"}
	claim := func(n int, follow bool) []cluster.Claimed {
		for range n {
			r := newRun("p")
			_, err := s.Create(ctx, r, nil)
			require.NoError(t, err)
			if follow {
				require.NoError(t, s.MarkFollowed(ctx, r.ID))
			}
		}
		got, err := s.Claim(ctx, owner, []string{"default"}, n, time.Minute)
		require.NoError(t, err)
		require.Len(t, got, n)
		return got
	}
	ref := func(c cluster.Claimed) cluster.Ref { return cluster.Ref{ID: c.ID, Epoch: c.Epoch} }

	alone := claim(1, false)[0]
	require.NoError(t, s.Finish(ctx, owner.InstanceID, ref(alone), cluster.Outcome{Status: "completed"}, nil))
	batch := claim(2, false)
	for _, err := range s.FinishBatch(ctx, owner.InstanceID, []cluster.Finishing{
		{Ref: ref(batch[0]), Outcome: cluster.Outcome{Status: "completed", Name: "p"}},
		{Ref: ref(batch[1]), Outcome: cluster.Outcome{Status: "failed", Name: "p", ErrorCode: "pipeline_error"}},
	}, nil) {
		require.NoError(t, err)
	}
	pending := newRun("p")
	_, err = s.Create(ctx, pending, nil)
	require.NoError(t, err)
	_, ok, err := s.CancelQueued(ctx, pending.ID, nil)
	require.NoError(t, err)
	require.True(t, ok)
	mu.Lock()
	require.Zero(t, doneSent, "no client followed those runs")
	mu.Unlock()

	followed := claim(1, true)[0]
	require.NoError(t, s.Finish(ctx, owner.InstanceID, ref(followed), cluster.Outcome{Status: "completed"}, nil))
	payload, ok := next(t, done)
	require.True(t, ok, "the end of a followed run is announced")
	require.Equal(t, followed.ID, payload, "the first announcement is the followed run's: none went out for the others")
}

// Marking a pending run followed holds its row lock for a moment, and a claim passes a
// locked row by (SKIP LOCKED) without looking again before its next poll: the mark wakes
// the claimers once it commits, so a run followed at once after its submission (`runs
// submit --wait`) is not left waiting a poll interval.
func TestPostgresMarkingAPendingRunFollowedWakesTheClaimers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _, sent := openCountingWork(t)
	r := newRun("p")
	_, err := s.Create(ctx, r, nil)
	require.NoError(t, err)
	sent.await(t, 1)
	before := sent.count()
	require.NoError(t, s.MarkFollowed(ctx, r.ID))
	sent.await(t, before+1) // in the mark's transaction, or trailing after its commit
}
