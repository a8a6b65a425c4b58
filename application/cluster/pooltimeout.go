package cluster

import (
	"github.com/sluicehq/sluice/domain/run"
)

// failUnservedPools is the lease-loop step of --pool-wait-timeout-secs (SPEC §5.5): any
// member fails the pending runs of pools nobody has served for that long, and the sharded
// runs whose pending shards wait there. Members race
// for the same runs harmlessly: each run is failed by one conditional write.
func (m *Member) failUnservedPools() {
	if m.cfg.PoolWaitTimeout <= 0 || m.deps.PoolTimeouts == nil {
		return
	}
	ctx, cancel := m.stmt(m.root)
	got, err := m.deps.PoolTimeouts.FailUnservedPools(ctx, m.cfg.LeaseTTL, m.cfg.PoolWaitTimeout, m.deps.Callbacks)
	cancel()
	for _, r := range got {
		m.metrics.RunFinished(r.Name, string(run.Failed), string(run.CodePoolUnavailable))
		m.audit(ActionPoolTimeout, r.ID, map[string]any{"pool": r.Pool, "code": string(run.CodePoolUnavailable),
			"wait_secs": int(m.cfg.PoolWaitTimeout.Seconds())})
		m.log.Warn("failed a pending or sharded run: its pool has had no live member for --pool-wait-timeout-secs",
			"run_id", r.ID, "pool", r.Pool, "wait", m.cfg.PoolWaitTimeout)
	}
	if err != nil && m.root.Err() == nil {
		m.log.Warn("failing runs of unserved pools failed", "error", m.redact(err.Error()))
	}
}
