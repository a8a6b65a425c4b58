package cluster

// notifyLoop turns the history's notifications into action at once (SPEC §4.3, §4.6): a
// work notification wakes the claim loop (and has it look for shards), a cancel notification fires the token of the
// named run when it executes here. Polling stays on as the fallback, so nothing here is
// the only path to anything.
func (m *Member) notifyLoop() {
	wake, cancels := m.deps.Notifications.Wakeups(), m.deps.Notifications.Cancels()
	for {
		select {
		case <-m.root.Done():
			return
		case <-wake:
			m.shardsHint.Store(true) // a peer may have planned or requeued shards
			m.Wake()
		case id := <-cancels:
			m.notifiedCancel(id)
		}
	}
}

// notifiedCancel acts on one cancel notification. The store notifies only after the
// flag is committed, and a run whose cancel was requested never runs again (a requeue or
// hand-back of such a run ends it cancelled), so an id needs no second look at the
// history. "" stands for several: the flags of every run here are read.
func (m *Member) notifiedCancel(id string) {
	if id == "" {
		m.pollCancels(viaNotification)
		return
	}
	m.cancelFound(id, viaNotification)
}

// cancelFound stops run id at its next page boundary if it runs here; via (viaPoll or
// viaNotification) says in the log how the request reached this member.
func (m *Member) cancelFound(id, via string) {
	if m.CancelLocal(id) {
		m.log.Info("cancel requested; stopping the run at a page boundary", "run_id", id, "via", via)
	}
}
