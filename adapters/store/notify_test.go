package store_test

import (
	"context"
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

func next(t *testing.T, conn *pgx.Conn) (string, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	n, err := conn.WaitForNotification(ctx)
	if err != nil {
		return "", false
	}
	return n.Payload, true
}

func TestPostgresNotifiesWorkAndCancels(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testdb.Postgres(t)
	s, err := store.Open(ctx, url, store.Options{})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Migrate(ctx))
	require.Contains(t, s.WorkChannel(), s.Schema(), "channels are derived from the schema")
	require.NotEqual(t, s.WorkChannel(), s.CancelChannel())

	work := listen(t, url, s.WorkChannel())
	cancels := listen(t, url, s.CancelChannel())
	r := newRun("p")
	_, err = s.Create(ctx, r, nil)
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

	// A burst is folded: at least the first and one trailing notification arrive, and
	// nothing is lost after the last create.
	burst := time.Now()
	for range 10 {
		_, err := s.Create(ctx, newRun("burst"), nil)
		require.NoError(t, err)
	}
	took := time.Since(burst)
	count := 0
	for {
		if _, ok := next(t, work); !ok {
			break
		}
		count++
	}
	require.GreaterOrEqual(t, count, 1)
	// At most one per 25 ms gap while the burst lasted, plus the trailing one after it.
	require.LessOrEqual(t, count, int(took/(25*time.Millisecond))+2, "burst took %s", took)
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
