package cluster_test

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/lease"
	"github.com/sluicehq/sluice/tests/testdb"
)

// passWatch is the real history with a signal after each reclaim pass, so the test can
// claim right after one, and a note of what the last pass reclaimed.
type passWatch struct {
	*store.Store
	passed chan struct{}

	mu   sync.Mutex
	last []string // ids the last Reclaim returned
}

func (p *passWatch) Reclaim(ctx context.Context, build runs.CallbackBuilder) ([]cluster.Reclaimed, error) {
	got, err := p.Store.Reclaim(ctx, build)
	p.mu.Lock()
	p.last = p.last[:0]
	for _, r := range got {
		p.last = append(p.last, r.ID)
	}
	p.mu.Unlock()
	select {
	case p.passed <- struct{}{}:
	default:
	}
	return got, err
}

func (p *passWatch) reclaimed(id string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Contains(p.last, id)
}

// A member that crashed right after claiming (its lease never renewed) is reclaimed by a
// peer at the lease's expiry, by a pass the peer's lease loop wakes for at that moment —
// not up to TTL/3 later at its next renewal tick (SPEC §4.5; README "Failover"). The
// claim is placed just after one of the peer's reclaim passes and its lease ends halfway
// between two ticks, so a loop that reclaimed only on ticks would do it at the later
// tick. Which pass reclaimed it is read from the loop's events, not from a stopwatch: on
// a loaded machine the loop may run late, but the pass that takes the run is still the
// one woken for the expiry.
func TestCrashedMembersRunIsReclaimedAtItsExpiry(t *testing.T) {
	t.Parallel()
	const ttl = 12 * time.Second // renewal ticks every 4 s
	// The crashed member's lease ends 2 s after a tick and 2 s before the next.
	crashedLease := ttl + lease.RenewInterval(ttl)/2
	for name, url := range testdb.Histories() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			st, err := store.Open(ctx, url(t), store.Options{})
			require.NoError(t, err)
			t.Cleanup(func() { _ = st.Close() })
			require.NoError(t, st.Migrate(ctx))
			now := time.Now().UTC()
			id := uuid.Must(uuid.NewV7()).String()
			// A pool the surviving member does not serve, so the requeued run stays put.
			_, err = st.Create(ctx, &runs.Record{ID: id, Name: "orders", Pool: "crashed", TriggerKind: "api",
				RunDate: now.Format(time.DateOnly), LogicalAt: now, MaxAttempts: 3, Config: "version: 1\n", CreatedAt: now}, nil)
			require.NoError(t, err)

			watch := &passWatch{Store: st, passed: make(chan struct{}, 1)}
			byExpiry := make(chan bool, 1)
			m, err := cluster.New(cluster.Config{
				InstanceID: "survivor", Listen: "127.0.0.1:1", Host: "host", Version: "test", PID: 2,
				MaxConcurrent: 1, LeaseTTL: ttl, PollInterval: time.Second, MaxAttempts: 3,
				ShutdownGrace: 50 * time.Millisecond, ShutdownKill: time.Second,
			}, cluster.Deps{Store: watch, Loader: &fakeLoader{}, Runner: &fakeRunner{fn: untilCancelled(1)},
				State: memState{}, Log: slog.New(slog.DiscardHandler),
				Events: cluster.Events{ReclaimPass: func(atExpiry bool) {
					if watch.reclaimed(id) {
						byExpiry <- atExpiry
					}
				}}})
			require.NoError(t, err)
			require.NoError(t, m.Start(ctx))
			t.Cleanup(m.Stop)

			<-watch.passed // the survivor's first tick has reclaimed (nothing)
			claimed, err := st.Claim(ctx, cluster.Owner{InstanceID: "crashed"}, []string{"crashed"}, 1, crashedLease)
			require.NoError(t, err)
			require.Len(t, claimed, 1) // …and the member that claimed it dies at once

			select {
			case atExpiry := <-byExpiry:
				require.True(t, atExpiry, "reclaimed by a renewal tick's pass, not by the pass woken for the expiry")
			case <-time.After(10 * crashedLease):
				t.Fatal("the survivor never reclaimed the run")
			}
			rec, err := st.Get(ctx, id)
			require.NoError(t, err)
			require.Equal(t, "pending", rec.Status)
			require.Len(t, rec.Attempts, 1)
			att := rec.Attempts[0]
			require.NotZero(t, att.EndedAt)
			took := att.EndedAt.Sub(att.ClaimedAt)
			t.Logf("claimed %s, reclaimed %s: %s after the claim (lease %s)", att.ClaimedAt.Format(time.RFC3339Nano),
				att.EndedAt.Format(time.RFC3339Nano), took, crashedLease)
			require.GreaterOrEqual(t, took, crashedLease, "never before the lease expired (database clock)")
		})
	}
}
