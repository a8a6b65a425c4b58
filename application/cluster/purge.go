package cluster

import (
	"context"
	"time"
)

// purgeLoop deletes terminal runs older than --retain-terminal-runs-secs and idempotency
// keys older than their retention, once at start and then every PurgeInterval. Every
// member may run it: deleting what is already gone deletes nothing.
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
	// A purge may delete many rows; it gets more time than one lease statement.
	ctx, cancel := context.WithTimeout(m.root, time.Minute)
	defer cancel()
	n, err := m.deps.Purger.Purge(ctx, now.Add(-m.cfg.RetainTerminal), now.Add(-m.cfg.IdempotencyRetention))
	switch {
	case err != nil && m.root.Err() == nil:
		m.log.Warn("purging old runs failed", "error", m.redact(err.Error()))
	case n > 0:
		m.log.Info("purged terminal runs past their retention", "runs", n)
	}
}
