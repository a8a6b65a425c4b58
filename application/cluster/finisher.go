package cluster

import (
	"context"
	"sync"

	"github.com/sluicehq/sluice/application/runs"
)

// Defaults of the finish group commit (see finishGroup).
const (
	// DefaultFinishTxns is how many finish transactions a member may have in flight: a
	// burst that queued behind a busy one starts the second (see extraBatchAt), so the
	// history's WAL flush of one batch overlaps the statements of the next.
	DefaultFinishTxns = 2
	// maxFinishBatch bounds one batch, so a transaction's row locks stay few and short.
	maxFinishBatch = 64
	// extraBatchAt is how many finishes must be queued before a second (third, …)
	// transaction starts beside a busy one: fewer wait for the busy one's commit and go
	// in its successor, which is cheaper for the history than a transaction each.
	extraBatchAt = 4
)

// finishGroup is the group commit of a member's finishes. A run that ends while no batch
// is in flight starts one at once, so a lone finish waits for nobody; a run that ends
// while one is busy joins the queue, and the next batch takes everything queued. Another
// batch starts beside the busy ones (up to txns in flight) once extraBatchAt finishes
// wait, so a burst is not held behind one commit. Under a backlog of short runs that
// turns one transaction per run into one per batch, which is where a member's run
// throughput went (a COMMIT, its WAL flush and its round trips per run). Each item keeps its own fence and its own answer
// (FinishBatcher), so a lost lease is still reported to that run's worker alone.
type finishGroup struct {
	store FinishBatcher
	owner string
	build runs.CallbackBuilder
	txns  int
	// stmt bounds one batch's transaction like any history statement of the member.
	stmt    func() (context.Context, context.CancelFunc)
	ev      Events
	metrics Metrics

	mu     sync.Mutex
	queue  []*finishReq
	flying int // batches in flight, ≤ txns
}

// finishReq is one run's finish waiting for its batch.
type finishReq struct {
	f    Finishing
	done chan finishAnswer // buffered: the batch never waits for the worker
}

// finishAnswer is what the batch says of one finish: its error, or the value a panic
// while writing it carried.
type finishAnswer struct {
	err      error
	panicked any
}

// finish hands f to the group and waits for its own answer. A panic while writing it (a
// callback builder, a store bug) is raised again here, on the run's own worker, whose
// settle turns it into a pipeline_error finish as it would without the group.
func (g *finishGroup) finish(f Finishing) error {
	r := &finishReq{f: f, done: make(chan finishAnswer, 1)}
	g.mu.Lock()
	g.queue = append(g.queue, r)
	queued := len(g.queue)
	lead := g.flying == 0 || (g.flying < g.txns && queued >= extraBatchAt)
	if lead {
		g.flying++
	}
	g.mu.Unlock()
	if lead {
		go g.run()
	} else {
		g.ev.finishQueued(queued)
	}
	a := <-r.done
	if a.panicked != nil {
		panic(a.panicked)
	}
	return a.err
}

// run commits batches until the queue is empty, then gives its slot back.
func (g *finishGroup) run() {
	for {
		g.mu.Lock()
		n := min(len(g.queue), maxFinishBatch)
		if n == 0 {
			g.flying--
			g.mu.Unlock()
			return
		}
		batch := g.queue[:n:n]
		g.queue = g.queue[n:]
		g.mu.Unlock()
		g.commit(batch)
	}
}

// commit writes one batch and answers each of its finishes. When the batch panics (it was
// rolled back), each finish is written alone, so only the one that panics is told so.
func (g *finishGroup) commit(batch []*finishReq) {
	items := make([]Finishing, len(batch))
	for i, r := range batch {
		items[i] = r.f
	}
	errs, panicked := g.write(items)
	// Only a transaction that committed is counted: a batch that panicked was rolled back,
	// and its runs are counted once, in the transactions that end them after all.
	switch {
	case panicked != nil && len(batch) > 1:
		for _, r := range batch {
			g.commit([]*finishReq{r})
		}
		return
	case panicked != nil:
		batch[0].done <- finishAnswer{panicked: panicked}
		return
	}
	g.ev.finishBatch(len(batch))
	g.metrics.RunsPerFinish(len(batch))
	for i, r := range batch {
		r.done <- finishAnswer{err: errs[i]}
	}
}

// write is one FinishBatch, bounded like any statement of the member, with a panic caught
// so the group's goroutine outlives it.
func (g *finishGroup) write(items []Finishing) (errs []error, panicked any) {
	defer func() {
		if v := recover(); v != nil {
			errs, panicked = nil, v
		}
	}()
	ctx, cancel := g.stmt()
	defer cancel()
	return g.store.FinishBatch(ctx, g.owner, items, g.build), nil
}

// newFinishGroup is the member's group commit, or nil when its store has no batches.
func (m *Member) newFinishGroup() *finishGroup {
	if m.deps.Finishes == nil {
		return nil
	}
	txns := m.cfg.FinishTxns
	if txns <= 0 {
		txns = DefaultFinishTxns
	}
	return &finishGroup{store: m.deps.Finishes, owner: m.cfg.InstanceID, build: m.deps.Callbacks, txns: txns,
		stmt: func() (context.Context, context.CancelFunc) { return m.stmt(m.root) }, ev: m.deps.Events,
		metrics: m.metrics}
}
