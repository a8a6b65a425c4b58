package cluster_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/tests/testdb"
)

// passWatch is the real history with a signal after each reclaim pass, so the test can
// claim right after one and know where the next renewal ticks fall.
type passWatch struct {
	*store.Store
	passed chan struct{}
}

func (p *passWatch) Reclaim(ctx context.Context, build runs.CallbackBuilder) ([]cluster.Reclaimed, error) {
	got, err := p.Store.Reclaim(ctx, build)
	select {
	case p.passed <- struct{}{}:
	default:
	}
	return got, err
}

// A member that crashed right after claiming (its lease never renewed) is reclaimed by a
// peer within TTL + 1 s of the claim, measured on the database clock that sets and judges
// leases (SPEC §4.5; README "Failover"). The crash is placed just after one of the peer's
// reclaim passes, the worst case for a loop that reclaims only on its TTL/3 ticks: the
// lease expires just after a tick and would wait for the next one, TTL/3 = 2 s later.
func TestCrashedMembersRunIsReclaimedWithinTTLPlusOneSecond(t *testing.T) {
	t.Parallel()
	const ttl = 6 * time.Second
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
			m, err := cluster.New(cluster.Config{
				InstanceID: "survivor", Listen: "127.0.0.1:1", Host: "host", Version: "test", PID: 2,
				MaxConcurrent: 1, LeaseTTL: ttl, PollInterval: time.Second, MaxAttempts: 3,
				ShutdownGrace: 50 * time.Millisecond, ShutdownKill: time.Second,
			}, cluster.Deps{Store: watch, Loader: &fakeLoader{}, Runner: &fakeRunner{fn: untilCancelled(1)},
				State: memState{}, Log: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			require.NoError(t, m.Start(ctx))
			t.Cleanup(m.Stop)

			<-watch.passed // the survivor's first tick has reclaimed (nothing)
			claimed, err := st.Claim(ctx, cluster.Owner{InstanceID: "crashed"}, []string{"crashed"}, 1, ttl)
			require.NoError(t, err)
			require.Len(t, claimed, 1) // …and the member that claimed it dies at once

			var rec *runs.Record
			require.Eventually(t, func() bool {
				rec, err = st.Get(ctx, id)
				require.NoError(t, err)
				return rec.Status == "pending"
			}, 4*ttl, 10*time.Millisecond, "the survivor reclaims the run")
			require.Len(t, rec.Attempts, 1)
			att := rec.Attempts[0]
			require.NotNil(t, att.EndedAt)
			took := att.EndedAt.Sub(att.ClaimedAt)
			t.Logf("claimed %s, reclaimed %s: %s after the claim (TTL %s)", att.ClaimedAt.Format(time.RFC3339Nano),
				att.EndedAt.Format(time.RFC3339Nano), took, ttl)
			require.GreaterOrEqual(t, took, ttl, "never before the lease expired")
			require.LessOrEqual(t, took, ttl+time.Second, "reclaimed within TTL + 1 s of the crash")
		})
	}
}
