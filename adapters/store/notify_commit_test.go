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
	commitHoldKey struct{} // a <-chan struct{}: this transaction's COMMIT waits until it is closed
	notifiedKey   struct{} // a func(): called once this transaction sent its NOTIFY
)

// commitControl holds the COMMIT of marked transactions and reports NOTIFYs, so a test
// orders commits against notifications by events rather than by pauses.
type commitControl struct {
	// unmarked gets a value after each NOTIFY of a context without notifiedKey: the
	// notifier's trailing notifications.
	unmarked chan struct{}
}

func (commitControl) BeforeQuery(ctx context.Context, ev *bun.QueryEvent) context.Context {
	if hold, ok := ctx.Value(commitHoldKey{}).(<-chan struct{}); ok && strings.EqualFold(ev.Operation(), "COMMIT") {
		<-hold
	}
	return ctx
}

func (c commitControl) AfterQuery(ctx context.Context, ev *bun.QueryEvent) {
	if !strings.HasPrefix(ev.Query, "SELECT pg_notify(") {
		return
	}
	if f, ok := ctx.Value(notifiedKey{}).(func()); ok {
		f()
		return
	}
	select {
	case c.unmarked <- struct{}{}:
	default:
	}
}

// A run created inside the 25 ms gap is announced by a trailing notification. When its
// transaction commits only after that went out, listeners that looked at once saw
// nothing: another notification must follow the commit.
func TestAFoldedNotificationIsSentAgainAfterALateCommit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testdb.Postgres(t)
	ctl := commitControl{unmarked: make(chan struct{}, 1)}
	s, err := store.Open(ctx, url, store.Options{QueryHook: ctl})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Migrate(ctx))
	work := listen(t, url, s.WorkChannel())
	late := newRun("late")

	// The listener looks at the history the moment each notification arrives, as a claim
	// loop would.
	var sawLate bool
	read, checked := make(chan struct{}), make(chan struct{}, 16)
	go func() {
		defer close(read)
		sawLate = visibleOnSomeNotification(work, late.ID, checked)
	}()

	// A leads: its NOTIFY goes out, its COMMIT waits. B starts the moment A notified, so
	// its NOTIFY is folded into the trailing one 25 ms later; A commits once that went out
	// (or once B notified on its own, on a machine too slow for B to fall into the gap),
	// and B commits only after the listener looked at every notification before it:
	// the trailing one and A's.
	var once sync.Once
	started, aHold, bHold, bNotified := make(chan struct{}), make(chan struct{}), make(chan struct{}), make(chan struct{})
	actx := context.WithValue(context.WithValue(ctx, commitHoldKey{}, (<-chan struct{})(aHold)),
		notifiedKey{}, func() { once.Do(func() { close(started) }) })
	errs := make(chan error, 2)
	go func() {
		_, err := s.Create(actx, newRun("lead"), nil)
		errs <- err
	}()
	<-started
	select { // a stale one from before
	case <-ctl.unmarked:
	default:
	}
	var bOnce sync.Once
	bctx := context.WithValue(context.WithValue(ctx, commitHoldKey{}, (<-chan struct{})(bHold)),
		notifiedKey{}, func() { bOnce.Do(func() { close(bNotified) }) })
	go func() {
		_, err := s.Create(bctx, late, nil)
		errs <- err
	}()
	looked := 1 // A's notification
	select {
	case <-ctl.unmarked:
		looked++ // and the trailing one, which stood for B
	case <-bNotified:
	}
	close(aHold)
	require.NoError(t, <-errs) // A committed
	for range looked {
		<-checked
	}
	close(bHold)
	require.NoError(t, <-errs)
	<-read
	require.True(t, sawLate, "a notification arrived after the late commit made the run visible")
}

// visibleOnSomeNotification reads notifications until id is visible when one arrives
// (true) or none comes for half a minute (false): a deadline that only ends a failing
// test, so a slow machine cannot make a passing one fail. It signals checked after each
// look at the history.
func visibleOnSomeNotification(conn *pgx.Conn, id string, checked chan<- struct{}) bool {
	ctx := context.Background()
	for {
		wctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		_, err := conn.WaitForNotification(wctx)
		cancel()
		if err != nil {
			return false
		}
		var n int
		if err := conn.QueryRow(ctx, "SELECT count(*) FROM sluice_runs WHERE id = $1", id).Scan(&n); err != nil {
			return false
		}
		checked <- struct{}{}
		if n == 1 {
			return true
		}
	}
}
