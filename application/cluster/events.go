package cluster

// Events are optional notifications of the member's loop steps. Tests wait on them — "three
// claim passes later", "after two lease cycles" — instead of sleeping and hoping the loop
// ran meanwhile, which is what made such tests flaky on a loaded machine. Each function is
// called on the loop's own goroutine right after the step and must return quickly; a nil
// function is not called.
type Events struct {
	// ClaimPass: the claim loop made one pass — it claimed, found nothing, or had no
	// free slot (full, draining or unhealthy).
	ClaimPass func()
	// LeaseCycle: the lease loop ended one renewal round (renew, heartbeat, reclaim,
	// pool timeouts), whether the history answered or not.
	LeaseCycle func()
	// OutageCheck: the outage watch compared the time since the last renewal with the
	// cutoff once (and stopped the runs if it had passed).
	OutageCheck func()
	// ReclaimPass: the lease loop asked the history to reclaim expired leases. atExpiry
	// is true for the pass it woke for at the earliest lease expiry it had read, false
	// for the pass of a renewal tick.
	ReclaimPass func(atExpiry bool)
	// FinishQueued: a finish found every finish transaction busy and joined the queue;
	// queued is the queue's length with it.
	FinishQueued func(queued int)
	// FinishBatch: one finish transaction of n runs ended, before their workers hear.
	FinishBatch func(n int)
}

func (e Events) claimPass() {
	if e.ClaimPass != nil {
		e.ClaimPass()
	}
}

func (e Events) leaseCycle() {
	if e.LeaseCycle != nil {
		e.LeaseCycle()
	}
}

func (e Events) reclaimPass(atExpiry bool) {
	if e.ReclaimPass != nil {
		e.ReclaimPass(atExpiry)
	}
}

func (e Events) outageCheck() {
	if e.OutageCheck != nil {
		e.OutageCheck()
	}
}

func (e Events) finishQueued(queued int) {
	if e.FinishQueued != nil {
		e.FinishQueued(queued)
	}
}

func (e Events) finishBatch(n int) {
	if e.FinishBatch != nil {
		e.FinishBatch(n)
	}
}
