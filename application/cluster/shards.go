package cluster

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/shard"
)

// Cluster Mode B (SPEC §6): the member that claims a run whose config asks for shards
// acts as its coordinator for a moment — it plans the shards and stores them with the run
// moved to sharded in one transaction — and from then on every member claims the shards
// like runs, sharing one capacity with them. A shard runs the run's config narrowed to
// its slice of the source, under its own lease, attempts and state key; the transaction
// that ends the last shard ends the run.

// claimShards claims up to n pending shards and starts a worker for each; it answers how
// many it claimed.
func (m *Member) claimShards(n int) int {
	if m.deps.Shards == nil {
		return 0
	}
	ctx, cancel := m.stmt(m.root)
	got, err := m.deps.Shards.ClaimShards(ctx, m.owner, m.cfg.Pools, n, m.cfg.LeaseTTL)
	cancel()
	if err != nil {
		if m.root.Err() == nil {
			m.log.Warn("claiming shards failed", "error", m.redact(err.Error()))
		}
		return 0
	}
	for i := range got {
		m.metrics.ShardClaimed()
		sh := got[i]
		m.launch(&execution{claim: sh.Run, shard: &sh})
	}
	return len(got)
}

// coordinate plans the shards of a run whose config asks for them and hands the run over
// to its shards. done=false means the run executes whole here: without sharding
// (no --cluster) or with a source that cannot be split, each with a warning in its log.
func (m *Member) coordinate(e *execution, log *slog.Logger, cfg *pipeline.Config, start time.Time) (res result, done bool) {
	c := e.claim
	if !m.cfg.Sharding {
		log.Warn("shard: ignored without --cluster; the run executes whole", "shard_count", c.ShardCount)
		return result{}, false
	}
	plan, err := m.deps.Planner.Plan(e.ctx, cfg, c.ShardCount)
	if err != nil {
		p := Progress{ElapsedMS: m.since(start)}
		if res, stopped := m.stopped(e, p); stopped {
			return res, true
		}
		code, msg := m.codeOf(err, run.CodeConfigError)
		log.Error("run failed: planning its shards", "code", code, "error", msg)
		return m.failedBy(err, code, msg, p), true
	}
	if len(plan) == 0 {
		log.Warn("shard: ignored because this source cannot be split; the run executes whole",
			"source", cfg.Source.Type, "shard_count", c.ShardCount)
		return result{}, false
	}
	if err := planAllowed(c, m.cfg.InstanceID, m.clock.Now(), plan); err != nil {
		log.Error("run failed: its shard plan breaks the lifecycle", "error", err.Error())
		return m.failed(run.CodePipelineError, "internal error: "+err.Error(), Progress{ElapsedMS: m.since(start)}), true
	}
	ctx, cancel := m.stmt(m.root)
	err = m.deps.Shards.PlanShards(ctx, m.cfg.InstanceID, e.ref, plan)
	cancel()
	switch {
	case err == nil:
		log.Info("run split into shards", "shards", len(plan), "shard_count", c.ShardCount)
		e.span.Event("split into shards", execute.A("shards", len(plan)))
		m.shardsHint.Store(true) // the claim loop, woken when this run's slot frees, takes some
		return result{act: actSharded}, true
	case errors.Is(err, run.ErrLeaseLost):
		return result{act: actDiscard}, true
	}
	// Whether the plan committed is unknown: a hand-back settles it either way (a run
	// that became sharded is no longer ours to hand back, which ends the attempt here).
	log.Warn("storing the shard plan failed; handing the run back", "error", m.redact(err.Error()))
	return result{act: actHandBack}, true
}

// planAllowed asks the domain whether the plan may be stored: the owner's running run
// becomes sharded (run.Run.MarkSharded) and every slice is a valid shard (shard.New). The
// store then writes both in one transaction.
func planAllowed(c Claimed, owner string, at time.Time, plan []execute.ShardSlice) error {
	r, err := heldRun(c, owner, at)
	if err != nil {
		return err
	}
	if err := r.MarkSharded(); err != nil {
		return err
	}
	maxAttempts := max(c.MaxAttempts, 1)
	for _, sl := range plan {
		p := shard.NewParams{RunID: c.ID, Index: sl.Index, Pool: c.Pool, MaxAttempts: maxAttempts}
		if sl.Range != nil {
			p.Range = *sl.Range
		}
		if _, err := shard.New(p); err != nil {
			return fmt.Errorf("shard %d: %w", sl.Index, err)
		}
	}
	return nil
}

// runEnded counts a run that a shard's end (or a reclaim) ended; name is "" when the
// history did not say which pipeline it ran.
func (m *Member) runEnded(runID, name, status string) {
	if status == "" {
		return
	}
	why := "ok"
	switch run.Status(status) {
	case run.Cancelled:
		why = "cancelled"
	case run.Failed:
		why = string(run.CodeShardFailed)
	}
	m.metrics.RunFinished(name, status, why)
	m.log.Info("sharded run finished with its last shard", "run_id", runID, "status", status)
}

// reclaimShards ends expired shard leases of any member and, as the backstop, sharded
// runs whose shards all ended; it reports whether a shard was requeued.
func (m *Member) reclaimShards() bool {
	if m.deps.Shards == nil {
		return false
	}
	ctx, cancel := m.stmt(m.root)
	got, err := m.deps.Shards.ReclaimShards(ctx, m.deps.Callbacks)
	cancel()
	if err != nil {
		m.log.Warn("reclaiming expired shard leases failed", "error", m.redact(err.Error()))
	}
	return m.countShardReclaim(got)
}

// countShardReclaim counts, logs and audits what a shard reclaim did; it reports whether a
// shard was requeued. The audit entries (a history write each) come after the counters, as
// for runs (countReclaimed).
func (m *Member) countShardReclaim(got ShardReclaim) bool {
	requeued := false
	for _, r := range got.Shards {
		m.metrics.ShardReclaimed(r.Outcome)
		m.log.Info("reclaimed a shard whose lease expired", "run_id", r.RunID, "shard", r.Index, "outcome", r.Outcome)
		requeued = requeued || r.Outcome == "requeued"
		m.runEnded(r.RunID, got.Names[r.RunID], r.Parent)
	}
	for id, status := range got.Settled {
		m.runEnded(id, got.Names[id], status)
	}
	for _, r := range got.Shards {
		m.audit(ActionShardReclaimed, r.RunID, map[string]any{"shard": r.Index, "outcome": r.Outcome})
	}
	return requeued
}
