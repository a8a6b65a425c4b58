package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/tests/testdb"
)

type (
	commitDelayKey struct{} // a time.Duration: how long this transaction's COMMIT waits
	notifiedKey    struct{} // a func(): called once this transaction sent its NOTIFY
)

// commitControl delays the COMMIT of marked transactions and reports marked NOTIFYs, so a
// test can order commits against notifications.
type commitControl struct{}

func (commitControl) BeforeQuery(ctx context.Context, ev *bun.QueryEvent) context.Context {
	if d, ok := ctx.Value(commitDelayKey{}).(time.Duration); ok && strings.EqualFold(ev.Operation(), "COMMIT") {
		time.Sleep(d)
	}
	return ctx
}

func (commitControl) AfterQuery(ctx context.Context, ev *bun.QueryEvent) {
	if f, ok := ctx.Value(notifiedKey{}).(func()); ok && strings.HasPrefix(ev.Query, "SELECT pg_notify(") {
		f()
	}
}

// A run created inside the 25 ms gap is announced by a trailing notification. When its
// transaction commits only after that went out, listeners that looked at once saw
// nothing: another notification must follow the commit.
func TestAFoldedNotificationIsSentAgainAfterALateCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testdb.Postgres(t)
	s, err := store.Open(ctx, url, store.Options{QueryHook: commitControl{}})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Migrate(ctx))
	work := listen(t, url, s.WorkChannel())
	late := newRun("late")

	// The listener looks at the history the moment each notification arrives, as a claim
	// loop would.
	var sawLate bool
	read := make(chan struct{})
	go func() {
		defer close(read)
		sawLate = visibleOnSomeNotification(work, late.ID)
	}()

	// A leads (its NOTIFY goes out with its commit, 40 ms later); B starts the moment A
	// notified, so its NOTIFY is folded into the trailing one at 25 ms — long before B
	// commits at 150 ms.
	var once sync.Once
	started := make(chan struct{})
	actx := context.WithValue(context.WithValue(ctx, commitDelayKey{}, 40*time.Millisecond),
		notifiedKey{}, func() { once.Do(func() { close(started) }) })
	errs := make(chan error, 2)
	go func() { _, err := s.Create(actx, newRun("lead"), nil); errs <- err }()
	<-started
	go func() {
		_, err := s.Create(context.WithValue(ctx, commitDelayKey{}, 150*time.Millisecond), late, nil)
		errs <- err
	}()
	require.NoError(t, <-errs)
	require.NoError(t, <-errs)
	<-read
	require.True(t, sawLate, "a notification arrived after the late commit made the run visible")
}

// visibleOnSomeNotification reads notifications until none comes for a second and reports
// whether id was visible when one of them arrived.
func visibleOnSomeNotification(conn *pgx.Conn, id string) bool {
	ctx := context.Background()
	seen := false
	for {
		wctx, cancel := context.WithTimeout(ctx, time.Second)
		_, err := conn.WaitForNotification(wctx)
		cancel()
		if err != nil {
			return seen
		}
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM sluice_runs WHERE id = $1", id).Scan(&n); err != nil {
			return seen
		}
		seen = seen || n == 1
	}
}
