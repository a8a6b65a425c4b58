package cluster_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/execute"
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
	heldIDs []string // the runs of the held batch, set before held is sent
}

func (g *gatedBatches) FinishBatch(ctx context.Context, owner string, batch []cluster.Finishing, b runs.CallbackBuilder) []error {
	if g.first.CompareAndSwap(false, true) {
		for _, f := range batch {
			g.heldIDs = append(g.heldIDs, f.Ref.ID)
		}
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

// groupedRuns is how many runs a grouping test ends at once.
const groupedRuns = 4

// grouped is a member with one finish transaction that ran groupedRuns runs: its first
// finish batch was held until the finishes of all the other runs queued behind it.
type grouped struct {
	h     *history
	g     *gatedBatches
	hs    *harness
	all   []cluster.Claimed
	first int // the size of the held batch
}

// groupedMember starts a grouped member on runs of prefix; edit tunes cfg and deps further.
func groupedMember(t *testing.T, prefix string, edit func(*cluster.Config, *cluster.Deps)) grouped {
	t.Helper()
	const n = groupedRuns
	gr := grouped{h: newHistory(t), all: ids(prefix, n)}
	gr.h.add(gr.all...)
	gr.g = &gatedBatches{history: gr.h, held: make(chan int, 1), release: make(chan struct{}), sizes: make(chan int, 4*n)}
	queued := make(chan int, n)
	gr.hs = start(t, gr.h, &fakeRunner{fn: succeed(1)}, func(cfg *cluster.Config, deps *cluster.Deps) {
		cfg.MaxConcurrent = n
		cfg.FinishTxns = 1
		deps.Finishes = gr.g
		deps.Events.FinishQueued = func(q int) { queued <- q }
		if edit != nil {
			edit(cfg, deps)
		}
	})
	gr.first = receive(t, gr.g.held, "the first finish batch")
	for q := 0; q < n-gr.first; {
		q = receive(t, queued, "a queued finish")
	}
	close(gr.g.release)
	return gr
}

// status is the run's status in the history.
func status(t *testing.T, h *history, id string) string {
	t.Helper()
	r, err := h.Store.Get(context.Background(), id)
	require.NoError(t, err)
	return r.Status
}

// Runs that end while the member's only finish transaction is busy wait for it and then
// share the next one: four runs ending together cost two transactions, not four, and
// every run still lands completed and counted.
func TestMemberGroupsFinishesThatEndTogether(t *testing.T) {
	t.Parallel()
	const n = groupedRuns
	gr := groupedMember(t, "g", nil)
	sizes := []int{receive(t, gr.g.sizes, "the first batch's commit")}
	if gr.first < n {
		sizes = append(sizes, receive(t, gr.g.sizes, "the second batch's commit"))
	}
	require.Equal(t, []int{gr.first, n - gr.first}[:len(sizes)], sizes, "the queued finishes share one transaction")
	require.Less(t, len(sizes), n)
	for _, c := range gr.all {
		require.Equal(t, "completed", status(t, gr.h, c.ID))
	}
	m := gr.hs.metrics
	require.Eventually(t, func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.finished) == n && len(m.perFinish) == len(sizes)
	}, waitFor, tick)
	m.mu.Lock()
	defer m.mu.Unlock()
	require.Equal(t, sizes, m.perFinish, "each finish transaction is observed with its runs")
	claimed := 0
	for _, k := range m.perClaim {
		require.Positive(t, k, "a claim that took nothing is not observed")
		claimed += k
	}
	require.Equal(t, n, claimed, "the claims observed add up to the runs claimed")
}

// A callback builder that panics for one run of a batch fails that run with
// pipeline_error, as without the group; the runs it shared the batch with are written
// again alone and complete, and the member lives on.
func TestMemberGroupedFinishPanicFailsOnlyItsRun(t *testing.T) {
	t.Parallel()
	var bad string
	gr := groupedMember(t, "p", func(_ *cluster.Config, deps *cluster.Deps) {
		bad = ids("p", groupedRuns)[1].ID
		deps.Callbacks = func(in runs.CallbackInput) (string, []byte, bool) {
			if in.RunID == bad && in.Status == "completed" {
				panic("builder bug")
			}
			return "", nil, false
		}
	})
	require.Eventually(t, func() bool { return status(t, gr.h, bad) == "failed" }, waitFor, tick)
	r, err := gr.h.Store.Get(context.Background(), bad)
	require.NoError(t, err)
	require.Equal(t, "pipeline_error", r.ErrorCode)
	for _, c := range gr.all {
		if c.ID != bad {
			require.Equal(t, "completed", status(t, gr.h, c.ID))
		}
	}
	// The rolled-back batch is not a finish transaction: each run is counted once, in the
	// transaction that ended it (alone, after the batch panicked).
	m := gr.hs.metrics
	require.Eventually(t, func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.finished) == groupedRuns
	}, waitFor, tick)
	m.mu.Lock()
	defer m.mu.Unlock()
	total := 0
	for _, n := range m.perFinish {
		total += n
	}
	require.Equal(t, groupedRuns, total, "runs per finish transaction %v", m.perFinish)
}

// With two finish transactions, a burst queued behind a busy one gets the second at once
// (it commits while the first is still held), in one batch.
func TestMemberStartsAnotherFinishBatchForABurst(t *testing.T) {
	t.Parallel()
	const n = 5
	h := newHistory(t)
	h.add(ids("b", n)...)
	g := &gatedBatches{history: h, held: make(chan int, 1), release: make(chan struct{}), sizes: make(chan int, n)}
	// Each token lets one run end, so the test decides how many finishes meet.
	tokens := make(chan struct{})
	runner := &fakeRunner{fn: func(ctx context.Context, job execute.Job) (execute.Stats, error) {
		<-tokens
		return execute.Stats{RowsRead: 1, RowsWritten: 1, Pages: 1}, nil
	}}
	start(t, h, runner, func(cfg *cluster.Config, deps *cluster.Deps) {
		cfg.MaxConcurrent = n
		cfg.FinishTxns = 2
		deps.Finishes = g
	})
	tokens <- struct{}{}
	require.Equal(t, 1, receive(t, g.held, "the first finish batch"))
	for range n - 1 {
		tokens <- struct{}{}
	}
	require.Equal(t, n-1, receive(t, g.sizes, "the burst's batch, beside the held one"))
	close(g.release)
	require.Equal(t, 1, receive(t, g.sizes, "the held batch's commit"))
}

// A run whose lease a peer took while its finish waited in the queue is told so alone:
// the batch it shares commits the other run, and the stolen run stays the peer's.
func TestMemberGroupedFinishLosesOnlyTheStolenRun(t *testing.T) {
	t.Parallel()
	const n = 3
	h := newHistory(t)
	all := ids("s", n)
	h.add(all...)
	g := &gatedBatches{history: h, held: make(chan int, 1), release: make(chan struct{}), sizes: make(chan int, n)}
	tokens := make(chan struct{})
	queued := make(chan int, n)
	hs := start(t, h, &fakeRunner{fn: func(ctx context.Context, job execute.Job) (execute.Stats, error) {
		<-tokens
		return execute.Stats{RowsRead: 1, RowsWritten: 1, Pages: 1}, nil
	}}, func(cfg *cluster.Config, deps *cluster.Deps) {
		cfg.MaxConcurrent = n
		cfg.FinishTxns = 1
		deps.Finishes = g
		deps.Events.FinishQueued = func(q int) { queued <- q }
	})
	tokens <- struct{}{}
	require.Equal(t, 1, receive(t, g.held, "the first finish batch"))
	for range n - 1 {
		tokens <- struct{}{}
	}
	for q := 0; q < n-1; {
		q = receive(t, queued, "a queued finish")
	}
	var waiting []string
	for _, c := range all {
		if c.ID != g.heldIDs[0] {
			waiting = append(waiting, c.ID)
		}
	}
	stolen, kept := waiting[0], waiting[1]
	h.steal(stolen)
	close(g.release)
	require.Equal(t, 1, receive(t, g.sizes, "the held batch's commit"))
	require.Equal(t, 2, receive(t, g.sizes, "the queued batch's commit"))
	require.Equal(t, "completed", status(t, h, kept))
	require.Equal(t, "completed", status(t, h, g.heldIDs[0]))
	r, err := h.Store.Get(context.Background(), stolen)
	require.NoError(t, err)
	require.Equal(t, "running", r.Status)
	require.Equal(t, peerOwner.InstanceID, r.Owner)
	m := hs.metrics
	require.Eventually(t, func() bool {
		m.mu.Lock()
		defer m.mu.Unlock()
		return len(m.finished) == n-1
	}, waitFor, tick)
}
