package cluster_test

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
)

// fakeShards keeps shards in memory: pending ones wait to be claimed, finished ones are
// recorded; the run ends when its last shard does.
type fakeShards struct {
	mu         sync.Mutex
	pending    []cluster.ClaimedShard
	plans      map[string][]execute.ShardSlice
	finished   map[cluster.ShardRef]cluster.Outcome
	handedBack []cluster.ShardRef
	progress   []cluster.ShardRef
	notRenewed map[int]bool // shard indexes whose renewal fails
	renewCalls int
	claimCalls int
	runOf      map[string]cluster.Claimed // the run a plan was stored for
	open       map[string]int             // unfinished shards per run
	ended      map[string]string
	// orphans is what ReclaimOrphanShards answers; orphanCalls the owners it was asked for.
	orphans     cluster.ShardReclaim
	orphanCalls []string
}

func newFakeShards() *fakeShards {
	return &fakeShards{plans: map[string][]execute.ShardSlice{}, finished: map[cluster.ShardRef]cluster.Outcome{},
		notRenewed: map[int]bool{}, runOf: map[string]cluster.Claimed{}, open: map[string]int{}, ended: map[string]string{}}
}

// addShards queues n shards of run c, as a plan stored elsewhere would.
func (f *fakeShards) addShards(c cluster.Claimed, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.runOf[c.ID] = c
	f.open[c.ID] += n
	for i := range n {
		f.pending = append(f.pending, cluster.ClaimedShard{Ref: cluster.ShardRef{RunID: c.ID, Index: i},
			MaxAttempts: 3, Slice: execute.ShardSlice{Index: i, Count: n}, Run: c})
	}
}

func (f *fakeShards) PlanShards(_ context.Context, _ string, ref cluster.Ref, plan []execute.ShardSlice) error {
	f.mu.Lock()
	f.plans[ref.ID] = plan
	f.mu.Unlock()
	return nil
}

func (f *fakeShards) ClaimShards(_ context.Context, _ cluster.Owner, _ []string, n int, _ time.Duration) ([]cluster.ClaimedShard, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.claimCalls++
	k := min(n, len(f.pending))
	got := slices.Clone(f.pending[:k])
	f.pending = f.pending[k:]
	for i := range got {
		got[i].Ref.Epoch = 7
		got[i].Attempt = 1
		got[i].Run.Epoch = 7
	}
	return got, nil
}

func (f *fakeShards) RenewShards(_ context.Context, _ string, held []cluster.ShardRef, _ time.Duration) ([]cluster.ShardRef, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.renewCalls++
	var out []cluster.ShardRef
	for _, r := range held {
		if !f.notRenewed[r.Index] {
			out = append(out, r)
		}
	}
	return out, nil
}

func (f *fakeShards) ShardProgress(_ context.Context, _ string, ref cluster.ShardRef, _ cluster.Progress) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.progress = append(f.progress, ref)
	return nil
}

func (f *fakeShards) end(ref cluster.ShardRef, status string) string {
	f.open[ref.RunID]--
	if f.open[ref.RunID] > 0 {
		return ""
	}
	f.ended[ref.RunID] = status
	return status
}

func (f *fakeShards) FinishShard(_ context.Context, _ string, ref cluster.ShardRef, o cluster.Outcome, _ runs.CallbackBuilder) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.notRenewed[ref.Index] {
		return "", run.ErrLeaseLost
	}
	f.finished[ref] = o
	return f.end(ref, o.Status), nil
}

func (f *fakeShards) HandBackShard(_ context.Context, _ string, ref cluster.ShardRef, _ cluster.Progress, _ runs.CallbackBuilder) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.handedBack = append(f.handedBack, ref)
	return "", nil
}

func (f *fakeShards) ReclaimShards(context.Context, runs.CallbackBuilder) (cluster.ShardReclaim, error) {
	return cluster.ShardReclaim{}, nil
}

func (f *fakeShards) ReclaimOrphanShards(_ context.Context, self string, _ runs.CallbackBuilder) (cluster.ShardReclaim, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.orphanCalls = append(f.orphanCalls, self)
	got := f.orphans
	f.orphans = cluster.ShardReclaim{}
	return got, nil
}

func (f *fakeShards) outcome(ref cluster.ShardRef) (cluster.Outcome, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ref.Epoch = 7
	o, ok := f.finished[ref]
	return o, ok
}

func (f *fakeShards) plan(id string) ([]execute.ShardSlice, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	p, ok := f.plans[id]
	return p, ok
}

// fakePlanner answers a fixed plan (or error) and records the counts it was asked for.
type fakePlanner struct {
	mu     sync.Mutex
	plan   []execute.ShardSlice
	err    error
	counts []int
}

func (p *fakePlanner) Plan(_ context.Context, _ *pipeline.Config, n int) ([]execute.ShardSlice, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.counts = append(p.counts, n)
	return p.plan, p.err
}

// sharding wires the fakes into a member; on turns Config.Sharding on.
func sharding(sh *fakeShards, pl *fakePlanner, on bool) func(*cluster.Config, *cluster.Deps) {
	return func(cfg *cluster.Config, deps *cluster.Deps) {
		cfg.Sharding = on
		deps.Shards, deps.Planner = sh, pl
	}
}
