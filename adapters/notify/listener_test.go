package notify_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"

	"github.com/sluicehq/sluice/adapters/notify"
	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/tests/testdb"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	// waitFor only ends a wait for something that never comes; a loaded machine under
	// -race may take seconds to work through a backlog of notifications.
	waitFor = 30 * time.Second
	tick    = 10 * time.Millisecond
)

func TestNewRefuses(t *testing.T) {
	t.Parallel()
	pg := "postgres://app:hunter2@127.0.0.1:5432/db"
	cases := []struct {
		name string
		cfg  notify.Config
		want string
	}{
		{"sqlite", notify.Config{URL: "sqlite:/tmp/h.db", WorkChannel: "w", CancelChannel: "c"}, "postgres://"},
		{"no channels", notify.Config{URL: pg}, "WorkChannel and CancelChannel are required"},
		{"one channel twice", notify.Config{URL: pg, WorkChannel: "x", CancelChannel: "x"}, `both "x"`},
		{"unparsable", notify.Config{URL: "postgres://app:hunter2@[::1", WorkChannel: "w", CancelChannel: "c"}, "cannot parse"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := notify.New(tc.cfg)
			require.ErrorContains(t, err, tc.want)
			require.NotContains(t, err.Error(), "hunter2", "credentials never appear")
		})
	}
}

// fixture is a migrated history and a started listener on its channels.
type fixture struct {
	url   string
	s     *store.Store
	l     *notify.Listener
	marks int // sent by mark
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx := context.Background()
	url := testdb.Postgres(t)
	s, err := store.Open(ctx, url, store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.Migrate(ctx))
	l, err := notify.New(notify.Config{URL: url, WorkChannel: s.WorkChannel(), CancelChannel: s.CancelChannel(),
		ScheduleChannel: s.ScheduleChannel(), MinBackoff: 20 * time.Millisecond, MaxBackoff: 200 * time.Millisecond})
	require.NoError(t, err)
	l.Start()
	t.Cleanup(l.Stop)
	f := &fixture{url: url, s: s, l: l}
	f.subscribed(t, 1)
	return f
}

// subscribed waits for the n-th subscription and takes what every subscription
// announces: one wake-up and one "check every run".
func (f *fixture) subscribed(t *testing.T, n int64) {
	t.Helper()
	require.Eventually(t, func() bool { return f.l.Subscriptions() >= n && f.l.Connected() }, waitFor, tick)
	f.wake(t, "a subscription announces a wake-up: work may have been missed")
	require.Equal(t, "", f.cancel(t), "a subscription announces a full cancel check")
}

func (f *fixture) wake(t *testing.T, msg string) {
	t.Helper()
	select {
	case <-f.l.Wakeups():
	case <-time.After(waitFor):
		t.Fatal("no wake-up: " + msg)
	}
}

func (f *fixture) cancel(t *testing.T) string {
	t.Helper()
	select {
	case id := <-f.l.Cancels():
		return id
	case <-time.After(waitFor):
		t.Fatal("no cancel notification")
	}
	return ""
}

// silent checks that no wake-up and no cancel arrived since the last one the test took.
func (f *fixture) silent(t *testing.T) {
	t.Helper()
	f.mark(t)
	select {
	case <-f.l.Wakeups():
		t.Fatal("unexpected wake-up")
	default:
	}
}

// mark proves that every notification committed before it was dispatched, without
// listening for a while: it notifies a mark of its own on the cancel channel and waits
// for it. PostgreSQL delivers a session's notifications in commit order and the
// listener dispatches them in order, so what came before the mark is in its Go channel
// by the time the mark is read — and a cancel that came before fails here.
func (f *fixture) mark(t *testing.T) {
	t.Helper()
	f.marks++
	mark := fmt.Sprintf("mark-%d", f.marks)
	_, err := f.s.DB().ExecContext(context.Background(), "SELECT pg_notify(?, ?)", f.s.CancelChannel(), mark)
	require.NoError(t, err)
	require.Equal(t, mark, f.cancel(t), "a cancel notification arrived before the mark")
}

func newRun(name string) *runs.Record {
	now := time.Now()
	return &runs.Record{ID: uuid.Must(uuid.NewV7()).String(), Name: name, Pool: "default", Status: "pending",
		TriggerKind: "api", RunDate: now.Format(time.DateOnly), MaxAttempts: 3, Config: "x", CreatedAt: now}
}

func TestHearsWorkAndCancelsCommittedByTheStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	f.silent(t)

	r := newRun("p")
	_, err := f.s.Create(ctx, r, nil)
	require.NoError(t, err)
	f.wake(t, "a created run wakes the claim loop")

	got, err := f.s.Claim(ctx, cluster.Owner{InstanceID: "m1"}, []string{"default"}, 1, time.Minute)
	require.NoError(t, err)
	require.Len(t, got, 1)
	_, err = f.s.RequestCancel(ctx, r.ID)
	require.NoError(t, err)
	require.Equal(t, r.ID, f.cancel(t), "the cancel notification names the run")
}

func TestARolledBackTransactionSendsNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	conn, err := pgx.Connect(ctx, f.url)
	require.NoError(t, err)
	defer conn.Close(ctx)

	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "SELECT pg_notify($1, ''), pg_notify($2, 'rolled-back')", f.s.WorkChannel(), f.s.CancelChannel())
	require.NoError(t, err)
	require.NoError(t, tx.Rollback(ctx))
	f.silent(t)

	tx, err = conn.Begin(ctx)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, "SELECT pg_notify($1, 'committed')", f.s.CancelChannel())
	require.NoError(t, err)
	f.silent(t) // nothing before the commit either
	require.NoError(t, tx.Commit(ctx))
	require.Equal(t, "committed", f.cancel(t))
}

func TestOtherSchemasAreNotHeard(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	other, err := store.Open(ctx, testdb.Postgres(t), store.Options{})
	require.NoError(t, err)
	defer other.Close()
	require.NoError(t, other.Migrate(ctx))
	require.NotEqual(t, f.s.WorkChannel(), other.WorkChannel())
	_, err = other.Create(ctx, newRun("elsewhere"), nil)
	require.NoError(t, err)
	f.silent(t)
}

func TestReconnectsAfterItsBackendIsTerminated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	pid := f.l.BackendPID()
	require.NotZero(t, pid)

	conn, err := pgx.Connect(ctx, f.url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	var killed bool
	require.NoError(t, conn.QueryRow(ctx, "SELECT pg_terminate_backend($1)", pid).Scan(&killed))
	require.True(t, killed)

	f.subscribed(t, 2)
	require.NotEqual(t, pid, f.l.BackendPID(), "a new connection listens")

	r := newRun("p")
	_, err = f.s.Create(ctx, r, nil)
	require.NoError(t, err)
	f.wake(t, "work is heard again after the reconnect")
	_, err = conn.Exec(ctx, "SELECT pg_notify($1, $2)", f.s.CancelChannel(), r.ID)
	require.NoError(t, err)
	require.Equal(t, r.ID, f.cancel(t))
}

func TestKeepsRetryingWhileTheDatabaseIsUnreachable(t *testing.T) {
	t.Parallel()
	// Nothing listens on port 1: every attempt is refused at once.
	l, err := notify.New(notify.Config{URL: "postgres://app:hunter2@127.0.0.1:1/db?sslmode=disable",
		WorkChannel: "w", CancelChannel: "c", MinBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond})
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	require.NoError(t, l.Run(ctx), "Run ends quietly when its context does")
	require.False(t, l.Connected())
	require.Zero(t, l.Subscriptions())
}

func TestRunTwiceAtOnceIsRefused(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	require.ErrorContains(t, f.l.Run(context.Background()), "already running")
}

func TestABacklogOfCancelsNeverBlocksAndFoldsIntoOneFullCheck(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t)
	conn, err := pgx.Connect(ctx, f.url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	// Far more cancels than the listener keeps, while nobody reads them.
	_, err = conn.Exec(ctx, "SELECT pg_notify($1, 'run-' || i) FROM generate_series(1, 3000) AS i", f.s.CancelChannel())
	require.NoError(t, err)
	_, err = conn.Exec(ctx, "SELECT pg_notify($1, '')", f.s.WorkChannel())
	require.NoError(t, err)
	f.wake(t, "work after the backlog is heard: the receive loop did not block on cancels")

	// Read until the full check arrives (the event the fold promises), then whatever is
	// already queued behind it; the deadline only ends a run where it never comes.
	var got []string
	deadline := time.After(waitFor)
	for !slices.Contains(got, "") {
		select {
		case id := <-f.l.Cancels():
			got = append(got, id)
		case <-deadline:
			t.Fatalf("no full check after a backlog of 3000 cancels (%d ids so far)", len(got))
		}
	}
	for drained := false; !drained; {
		select {
		case id := <-f.l.Cancels():
			got = append(got, id)
		default:
			drained = true
		}
	}
	require.NotEmpty(t, got)
	require.Less(t, len(got), 3000, "the backlog was folded")
	require.Contains(t, got, "", "folded ids become one full check")
	seen := map[string]bool{}
	for _, id := range got {
		require.False(t, seen[id], "%q delivered twice", id)
		seen[id] = true
		require.True(t, id == "" || strings.HasPrefix(id, "run-"), id)
	}
}

func TestStopWithoutStartAndTwice(t *testing.T) {
	t.Parallel()
	l, err := notify.New(notify.Config{URL: "postgres://127.0.0.1:1/db", WorkChannel: "w", CancelChannel: "c"})
	require.NoError(t, err)
	l.Stop()
	l.Start()
	l.Stop()
	l.Stop()
	require.False(t, l.Connected())
}

func Example() {
	l, err := notify.New(notify.Config{URL: "postgres://sluice@db:5432/sluice",
		WorkChannel: "sluice_work_public", CancelChannel: "sluice_cancel_public"})
	if err != nil {
		fmt.Println(err)
		return
	}
	// A member takes the listener as its cluster.Deps.Notifications; Start before the
	// member, Stop after it.
	var _ cluster.Notifications = l
	fmt.Println(l.Connected())
	// Output: false
}
