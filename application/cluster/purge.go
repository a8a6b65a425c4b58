package cluster

import (
	"time"

	"github.com/sluicehq/sluice/application/runs"
)

// purgeLoop deletes what outlived --retain-terminal-runs-secs, the idempotency retention
// and --retain-audit-secs, once at start and then every PurgeInterval. Every member runs
// the loop, but the store lets one purge at a time through: the others skip the pass.
func (m *Member) purgeLoop() {
	t := time.NewTicker(m.cfg.PurgeInterval)
	defer t.Stop()
	for {
		m.purgeOnce()
		select {
		case <-m.root.Done():
			return
		case <-t.C:
		}
	}
}

func (m *Member) purgeOnce() {
	now := m.clock.Now()
	// No deadline for the pass: it is a series of short transactions, each with its own
	// timeout in the store, so a large backlog is worked off instead of timing out and
	// rolling back as a whole. Shutdown (root) stops it between or inside batches.
	res, err := m.deps.Purger.Purge(m.root, runs.PurgeRequest{
		RunsBefore:        now.Add(-m.cfg.RetainTerminal),
		IdempotencyBefore: now.Add(-m.cfg.IdempotencyRetention),
		AuditBefore:       now.Add(-m.cfg.RetainAudit),
		SignoutsBefore:    now,
		BatchSize:         m.cfg.PurgeBatch,
	})
	switch {
	case err != nil && m.root.Err() == nil:
		m.log.Warn("purging old runs failed", "error", m.redact(err.Error()), "runs", res.Runs)
	case res.Skipped:
		m.log.Debug("purge skipped: another member is purging the history")
	case res.Runs > 0 || res.Audit > 0:
		m.log.Info("purged history past its retention", "runs", res.Runs, "audit_entries", res.Audit)
	}
}
