package cluster

import (
	"slices"
	"time"

	"github.com/sluicehq/sluice/domain/lease"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/state"
)

// outageRetry is how often a member whose renewals fail tries again, and how often the
// outage watch looks at the cutoff: a quarter of the renew interval (TTL/12). Retrying
// faster than TTL/3 matters because runs stopped by an outage can only be handed back
// while their leases hold: a link that returns between the cutoff (2·TTL/3) and the
// expiry (TTL) would otherwise be noticed only at the tick that coincides with the
// expiry, and the run would be reclaimed with an attempt spent instead.
func outageRetry(ttl time.Duration) time.Duration { return lease.RenewInterval(ttl) / 4 }

// Bounds of the wait for the earliest lease expiry. expirySlack lets the database clock,
// which counts in milliseconds, pass the expiry before the reclaim pass asks for it;
// minExpiryWait is the wait for a lease found expired right after a pass.
const (
	expirySlack   = 5 * time.Millisecond
	minExpiryWait = 50 * time.Millisecond
)

// leaseLoop keeps what this member holds: every TTL/3 it renews all leases in one
// statement, heartbeats, and reclaims expired leases of any member; while renewals fail
// it retries every TTL/12; every poll interval it looks for cancel flags of the runs it
// executes (the cross-member cancel path when no notification arrives).
//
// Between those ticks it wakes once more when the earliest lease the history holds
// expires, as read after each reclaim pass: a member that crashed right after renewing
// is reclaimed at its expiry, so failover takes at most the TTL plus one pass — not the
// TTL plus up to TTL/3 until a tick happens to come.
func (m *Member) leaseLoop() {
	renew := time.NewTicker(lease.RenewInterval(m.cfg.LeaseTTL))
	defer renew.Stop()
	poll := time.NewTicker(m.cfg.PollInterval)
	defer poll.Stop()
	retry := time.NewTimer(outageRetry(m.cfg.LeaseTTL))
	retry.Stop() // armed only while renewals fail
	defer retry.Stop()
	expiry := time.NewTimer(lease.RenewInterval(m.cfg.LeaseTTL))
	expiry.Stop() // armed for the earliest expiry the last reclaim pass read
	defer expiry.Stop()
	for {
		var wait time.Duration
		select {
		case <-m.root.Done():
			return
		case <-renew.C:
			wait = m.leaseCycle()
			m.deps.Events.leaseCycle()
		case <-retry.C:
			wait = m.leaseCycle()
			m.deps.Events.leaseCycle()
		case <-expiry.C:
			if m.renewalFailing() {
				continue // a member whose own renewals fail reclaims nothing
			}
			wait = m.reclaimPass()
			m.deps.Events.reclaimPass(true)
		case <-poll.C:
			m.pollCancels(viaPoll)
			continue
		}
		if m.renewalFailing() {
			retry.Reset(outageRetry(m.cfg.LeaseTTL))
		} else {
			retry.Stop()
		}
		if wait > 0 {
			expiry.Reset(wait)
		} else {
			expiry.Stop()
		}
	}
}

// outageWatch stops every run here once the outage cutoff has passed (§4.9). It runs
// apart from the lease loop, whose statements may each hang for TTL/6, so the cutoff is
// kept within TTL/12 whatever the history does: the runs stop before their leases can
// expire and a peer that reclaims them never runs them at the same time.
func (m *Member) outageWatch() {
	t := time.NewTicker(outageRetry(m.cfg.LeaseTTL))
	defer t.Stop()
	for {
		select {
		case <-m.root.Done():
			return
		case <-t.C:
			m.checkOutage()
			m.deps.Events.outageCheck()
		}
	}
}

// checkOutage stops every run here when renewals have failed for the outage cutoff,
// measured on the monotonic clock since the last successful renewal was SENT.
func (m *Member) checkOutage() {
	m.mu.Lock()
	failing := m.renewFailing
	since := m.clock.Now().Sub(m.lastOK)
	m.mu.Unlock()
	if !failing || since < lease.OutageCutoff(m.cfg.LeaseTTL) {
		return
	}
	if n := m.stopAll(errOutage); n > 0 {
		m.log.Error("history unreachable past the outage cutoff; stopped every run here to hand it back later",
			"since_last_renewal", since, "stopped", n)
	}
}

func (m *Member) renewalFailing() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.renewFailing
}

// leaseCycle is one renewal round: one statement per table (runs, shards). It returns
// how long to wait for the next reclaim pass (0: until the next tick).
func (m *Member) leaseCycle() time.Duration {
	runRefs, shardRefs := m.heldRefs()
	held := len(runRefs)+len(shardRefs) > 0
	sent := m.clock.Now() // the cutoff counts from when the statement was SENT
	if held {
		if err := m.renew(runRefs, shardRefs); err != nil {
			// No heartbeat after a failed renewal: it would fail the same way and, with
			// its own statement timeout, delay the next try.
			if m.root.Err() == nil {
				m.renewalFailed(err)
			}
			return 0
		}
	}
	ctx, cancel := m.stmt(m.root)
	hbErr := m.deps.Store.Heartbeat(ctx, m.memberRow())
	cancel()
	if m.root.Err() != nil {
		return 0
	}
	if hbErr != nil && !held {
		// Nothing to renew: the heartbeat is what tells whether the history answers.
		m.renewalFailed(hbErr)
		return 0
	}
	m.renewalSucceeded(sent, hbErr == nil)
	if hbErr != nil {
		m.log.Warn("heartbeat failed", "error", m.redact(hbErr.Error()))
		return 0
	}
	wait := m.reclaimPass()
	m.readDue()
	m.deps.Events.reclaimPass(false)
	m.failUnservedPools()
	return wait
}

// renew extends the leases held here and stops what lost its lease. Each table's
// statement has its own timeout.
func (m *Member) renew(runRefs []Ref, shardRefs []ShardRef) error {
	if len(runRefs) > 0 {
		ctx, cancel := m.stmt(m.root)
		renewed, err := m.deps.Store.Renew(ctx, m.cfg.InstanceID, runRefs, m.cfg.LeaseTTL)
		cancel()
		if err != nil {
			return err
		}
		m.markLost(runRefs, renewed)
	}
	if len(shardRefs) > 0 {
		ctx, cancel := m.stmt(m.root)
		renewed, err := m.deps.Shards.RenewShards(ctx, m.cfg.InstanceID, shardRefs, m.cfg.LeaseTTL)
		cancel()
		if err != nil {
			return err
		}
		m.markShardsLost(shardRefs, renewed)
	}
	return nil
}

// heldRefs lists the leases held here, by table.
func (m *Member) heldRefs() ([]Ref, []ShardRef) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var refs []Ref
	var shards []ShardRef
	for _, e := range m.execs {
		if e.shard != nil {
			shards = append(shards, e.shard.Ref)
		} else {
			refs = append(refs, e.ref)
		}
	}
	return refs, shards
}

// markLost stops every held run the renewal did not return: its lease is gone (expired
// and reclaimed, or fenced by a newer epoch), so it must not write anything more.
func (m *Member) markLost(held, renewed []Ref) {
	for _, ref := range held {
		if slices.Contains(renewed, ref) {
			continue
		}
		m.mu.Lock()
		e := m.execs[ref.ID]
		m.mu.Unlock()
		if e != nil && e.shard == nil && e.ref == ref {
			m.log.Warn("lease lost at renewal; stopping the run and discarding its result", "run_id", ref.ID,
				"epoch", ref.Epoch)
			e.loseLease("renewal")
		}
	}
}

// markShardsLost is markLost for shards.
func (m *Member) markShardsLost(held, renewed []ShardRef) {
	for _, ref := range held {
		if slices.Contains(renewed, ref) {
			continue
		}
		m.mu.Lock()
		e := m.execs[state.ShardKey(ref.RunID, ref.Index)]
		m.mu.Unlock()
		if e != nil && e.shard != nil && e.shard.Ref == ref {
			m.log.Warn("lease lost at renewal; stopping the shard and discarding its result", "run_id", ref.RunID,
				"shard", ref.Index, "epoch", ref.Epoch)
			e.loseLease("renewal")
		}
	}
}

// renewalFailed handles an unanswered renewal (§4.9): report the outage and stop
// claiming; the outage watch stops the runs once the cutoff has passed, and it is checked
// here too so a cycle that notices a long outage acts at once.
func (m *Member) renewalFailed(err error) {
	m.mu.Lock()
	first := !m.renewFailing
	m.renewFailing = true
	m.healthy = false
	m.mu.Unlock()
	m.metrics.HistoryUnreachable(true)
	if first {
		m.log.Error("lease renewal failed: the history is unreachable; claiming stops", "error", m.redact(err.Error()))
	}
	m.checkOutage()
}

// renewalSucceeded records a renewal that answered; after an outage it hands back the
// runs the outage stopped before claiming resumes.
func (m *Member) renewalSucceeded(sent time.Time, heartbeatOK bool) {
	m.mu.Lock()
	recovered := m.renewFailing
	m.renewFailing = false
	m.lastOK = sent
	m.mu.Unlock()
	if recovered {
		m.metrics.HistoryUnreachable(false)
		m.log.Info("the history answers again")
	}
	m.handBackParked()
	m.mu.Lock()
	wasHealthy := m.healthy
	m.healthy = heartbeatOK
	m.mu.Unlock()
	if heartbeatOK && !wasHealthy {
		m.Wake()
	}
}

// reclaimPass reclaims expired leases, then reads when the earliest remaining lease
// expires and returns how long to wait for the pass that reclaims it (0: none known, or
// the reclaim failed — the next tick tries again).
func (m *Member) reclaimPass() time.Duration {
	if !m.reclaim() {
		return 0
	}
	ctx, cancel := m.stmt(m.root)
	left, ok, err := m.deps.Store.NextExpiry(ctx)
	cancel()
	if err != nil {
		m.log.Warn("reading the earliest lease expiry failed", "error", m.redact(err.Error()))
		return 0
	}
	if !ok {
		return 0
	}
	if left > 0 {
		m.overdue = 0
		return max(left+expirySlack, minExpiryWait)
	}
	// A lease still expired after the pass: a reclaim batch left it, or it expired a
	// moment ago — look again soon. One that stays expired (its reclaim keeps failing) is
	// retried at the outage pace rather than spun on.
	m.overdue++
	if m.overdue > 1 {
		return outageRetry(m.cfg.LeaseTTL)
	}
	return minExpiryWait
}

// reclaim ends expired leases of any member (§4.5); false when the history refused.
func (m *Member) reclaim() bool {
	ctx, cancel := m.stmt(m.root)
	got, err := m.deps.Store.Reclaim(ctx, m.deps.Callbacks)
	cancel()
	if err != nil {
		m.log.Warn("reclaiming expired leases failed", "error", m.redact(err.Error()))
		return false
	}
	m.countReclaimed(got)
	if m.reclaimShards() || len(got) > 0 {
		m.Wake() // requeued runs and shards may be ours to claim
	}
	return true
}

// countReclaimed counts, logs and audits what a reclaim pass did. The counters come first:
// the requeued runs are already claimable, and a peer may finish one while the audit
// entries (a history write each) are still being written.
func (m *Member) countReclaimed(got []Reclaimed) {
	for _, r := range got {
		m.metrics.Reclaimed(r.Outcome)
		switch r.Outcome {
		case string(run.Failed):
			m.metrics.RunFinished(r.Name, string(run.Failed), string(run.CodePoisoned))
		case string(run.Cancelled):
			m.metrics.RunFinished(r.Name, string(run.Cancelled), "cancelled")
		}
		m.log.Info("reclaimed a run whose lease expired", "run_id", r.ID, "outcome", r.Outcome)
	}
	m.auditReclaimed(got)
}

// How a cross-member cancel reached this member, as its log line says: the owner's
// notification, or its own look at the flags every poll interval (the fallback).
const (
	viaNotification = "notification"
	viaPoll         = "poll"
)

// pollCancels fires the tokens of runs here whose cancel was requested on another member;
// via says what made it look.
func (m *Member) pollCancels(via string) {
	m.mu.Lock()
	failing := m.renewFailing
	ids := make([]string, 0, len(m.execs))
	for _, e := range m.execs {
		// A shard obeys its run's flag: the ids are run ids.
		if !slices.Contains(ids, e.claim.ID) {
			ids = append(ids, e.claim.ID)
		}
	}
	m.mu.Unlock()
	if failing || len(ids) == 0 {
		return
	}
	ctx, cancel := m.stmt(m.root)
	got, err := m.deps.Store.CancelRequested(ctx, ids)
	cancel()
	if err != nil {
		m.log.Warn("looking for cancel requests failed", "error", m.redact(err.Error()))
		return
	}
	for _, id := range got {
		m.cancelFound(id, via)
	}
}
