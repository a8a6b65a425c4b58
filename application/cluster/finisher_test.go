package cluster_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
)

// gatedBatches is the history's FinishBatch holding its first batch until release is
// closed, and telling the size of every batch it committed.
type gatedBatches struct {
	*history
	held    chan int // the size of the first batch, once it is held
	release chan struct{}
	sizes   chan int
	first   atomic.Bool
}

func (g *gatedBatches) FinishBatch(ctx context.Context, owner string, batch []cluster.Finishing, b runs.CallbackBuilder) []error {
	if g.first.CompareAndSwap(false, true) {
		g.held <- len(batch)
		<-g.release
	}
	// Held, the batch outlived its statement timeout; this test stages no slow history.
	ctx, done := patient(ctx)
	defer done()
	errs := g.Store.FinishBatch(ctx, owner, batch, b)
	g.sizes <- len(batch)
	return errs
}

// Runs that end while the member's only finish transaction is busy wait for it and then
// share the next one: four runs ending together cost two transactions, not four, and
// every run still lands completed and counted.
func TestMemberGroupsFinishesThatEndTogether(t *testing.T) {
	t.Parallel()
	const n = 4
	h := newHistory(t)
	all := ids("g", n)
	h.add(all...)
	g := &gatedBatches{history: h, held: make(chan int, 1), release: make(chan struct{}), sizes: make(chan int, n)}
	queued := make(chan int, n)
	hs := start(t, h, &fakeRunner{fn: succeed(1)}, func(cfg *cluster.Config, deps *cluster.Deps) {
		cfg.MaxConcurrent = n
		cfg.FinishTxns = 1
		deps.Finishes = g
		deps.Events.FinishQueued = func(q int) { queued <- q }
	})
	first := receive(t, g.held, "the first finish batch")
	// The rest end while the first batch is held: they queue behind it.
	for q := 0; q < n-first; {
		q = receive(t, queued, "a queued finish")
	}
	close(g.release)
	sizes := []int{receive(t, g.sizes, "the first batch's commit")}
	if first < n {
		sizes = append(sizes, receive(t, g.sizes, "the second batch's commit"))
	}
	require.Equal(t, []int{first, n - first}[:len(sizes)], sizes, "the queued finishes share one transaction")
	require.Less(t, len(sizes), n)
	for _, c := range all {
		r, err := h.Store.Get(context.Background(), c.ID)
		require.NoError(t, err)
		require.Equal(t, "completed", r.Status)
	}
	require.Eventually(t, func() bool {
		hs.metrics.mu.Lock()
		defer hs.metrics.mu.Unlock()
		return len(hs.metrics.finished) == n
	}, waitFor, tick)
}
