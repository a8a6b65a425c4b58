package cluster_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
)

// auditLog records audit entries.
type auditLog struct {
	mu      sync.Mutex
	entries []runs.AuditEntry
}

func (a *auditLog) Audit(_ context.Context, e runs.AuditEntry) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.entries = append(a.entries, e)
	return nil
}

// of returns the entries of action, as "run_id" → entry.
func (a *auditLog) of(action string) map[string]runs.AuditEntry {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[string]runs.AuditEntry{}
	for _, e := range a.entries {
		if e.Action == action {
			out[e.RunID] = e
		}
	}
	return out
}

// SPEC §2.10: every state change is audited, the ones no person asked for too, with the
// member that made them as actor.
func TestReclaimAndPoisonAreAuditedWithTheMemberAsActor(t *testing.T) {
	t.Parallel()
	store := newHistory(t)
	// A peer claimed three runs of a pool this member does not serve and died: their
	// leases expire a moment later. One has no attempt left, one's cancel was requested.
	for _, id := range []string{"r-cancelled", "r-poisoned", "r-requeued"} {
		c := claimed(id)
		c.Pool = "elsewhere"
		if id == "r-poisoned" {
			c.MaxAttempts = 1
		}
		store.create(c)
	}
	store.peer(func(ctx context.Context) {
		got, err := store.Store.Claim(ctx, peerOwner, []string{"elsewhere"}, 3, time.Millisecond)
		require.NoError(t, err)
		require.Len(t, got, 3)
		_, err = store.RequestCancel(ctx, "r-cancelled")
		require.NoError(t, err)
	})
	audit := &auditLog{}
	start(t, store, &fakeRunner{fn: succeed(1)}, func(_ *cluster.Config, d *cluster.Deps) { d.Audit = audit })
	require.Eventually(t, func() bool { return len(audit.of(cluster.ActionPoisoned)) == 1 }, waitFor, tick)

	reclaimed := audit.of(cluster.ActionReclaimed)
	require.Len(t, reclaimed, 2)
	require.Equal(t, "requeued", reclaimed["r-requeued"].Details["outcome"])
	require.Equal(t, "cancelled", reclaimed["r-cancelled"].Details["outcome"])
	poisoned := audit.of(cluster.ActionPoisoned)["r-poisoned"]
	require.Equal(t, "poisoned", poisoned.Details["code"])
	for _, e := range []runs.AuditEntry{reclaimed["r-requeued"], reclaimed["r-cancelled"], poisoned} {
		require.Equal(t, "member:m1", e.Actor)
		require.False(t, e.At.IsZero())
	}
}

func TestOrphansReclaimedAtStartAreAudited(t *testing.T) {
	t.Parallel()
	audit := &auditLog{}
	store := newHistory(t)
	orphan := claimed("orphan")
	orphan.Pool = "elsewhere"
	store.held(orphan)
	start(t, store, &fakeRunner{fn: succeed(1)}, func(c *cluster.Config, d *cluster.Deps) {
		c.Exclusive = true
		d.Audit = audit
	})
	e, ok := audit.of(cluster.ActionReclaimed)["orphan"]
	require.True(t, ok, "the orphan reclaimed before the first claim is audited")
	require.Equal(t, "member:m1", e.Actor)
}

func TestPoolWaitTimeoutIsAudited(t *testing.T) {
	t.Parallel()
	audit := &auditLog{}
	store := newHistory(t)
	unserved(store, map[string]string{"p1": "orders"})
	start(t, store, &fakeRunner{fn: succeed(1)}, func(c *cluster.Config, d *cluster.Deps) {
		c.PoolWaitTimeout = 5 * time.Second
		d.PoolTimeouts = store
		d.Audit = audit
	})
	require.Eventually(t, func() bool { return len(audit.of(cluster.ActionPoolTimeout)) == 1 }, waitFor, tick)
	e := audit.of(cluster.ActionPoolTimeout)["p1"]
	require.Equal(t, "member:m1", e.Actor)
	require.Equal(t, "gpu", e.Details["pool"])
	require.Equal(t, "pool_unavailable", e.Details["code"])
}

func TestHandBackIsAudited(t *testing.T) {
	t.Parallel()
	audit := &auditLog{}
	store := newHistory(t)
	store.add(claimed("r1"))
	h := start(t, store, &fakeRunner{fn: untilCancelled(4)}, func(c *cluster.Config, d *cluster.Deps) {
		c.ShutdownGrace = 0
		d.Audit = audit
	})
	require.Eventually(t, func() bool { return h.member.InFlight() == 1 }, waitFor, tick)
	require.NoError(t, h.member.Drain(context.Background()))
	requireHandedBack(t, store, "r1", 4)
	e, ok := audit.of(cluster.ActionHandedBack)["r1"]
	require.True(t, ok)
	require.Equal(t, "member:m1", e.Actor)
	require.EqualValues(t, 4, e.Details["rows_written"])
}
