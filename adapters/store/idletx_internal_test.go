package store

import (
	"context"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/tests/testdb"
)

// A member frozen in the middle of a transaction (SIGSTOP, a GC pause, a VM freeze) must
// not keep its peers from reclaiming the run whose row it locked: PostgreSQL ends the
// idle transaction after IdleTxTimeout, and its locks go with it.
func TestIdleTransactionOfAFrozenMemberReleasesItsLocks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := testdb.Postgres(t)
	frozen, err := Open(ctx, url, Options{IdleTxTimeout: 300 * time.Millisecond})
	require.NoError(t, err)
	t.Cleanup(func() { _ = frozen.Close() })
	require.NoError(t, frozen.Migrate(ctx))
	peer, err := Open(ctx, url, Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = peer.Close() })

	now := time.Now().UTC()
	id := uuid.Must(uuid.NewV7()).String()
	_, err = frozen.Create(ctx, &runs.Record{ID: id, Name: "orders", Pool: "default", TriggerKind: "api",
		RunDate: now.Format(time.DateOnly), LogicalAt: now, MaxAttempts: 3, Config: "version: 1\n", CreatedAt: now}, nil)
	require.NoError(t, err)
	tx, err := frozen.db.BeginTx(ctx, nil)
	require.NoError(t, err)
	var locked []string
	require.NoError(t, tx.NewRaw("SELECT id FROM sluice_runs WHERE id = ? FOR UPDATE", id).Scan(ctx, &locked))
	// The member freezes here: its transaction stays open and sends nothing more.

	require.Eventually(t, func() bool {
		ptx, err := peer.db.BeginTx(ctx, nil)
		require.NoError(t, err)
		defer func() { _ = ptx.Rollback() }()
		var got []string
		return ptx.NewRaw("SELECT id FROM sluice_runs WHERE id = ? FOR UPDATE NOWAIT", id).Scan(ctx, &got) == nil
	}, 10*time.Second, 20*time.Millisecond, "a peer can lock the run once the frozen transaction was ended")
	require.Error(t, tx.Commit(), "the frozen member's transaction is gone when it wakes")
}
