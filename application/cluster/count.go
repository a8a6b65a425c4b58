package cluster

import "time"

// countFinished counts a run this member finished: its outcome, and its running time
// over every attempt (earlier attempts' time comes with the claim).
func (m *Member) countFinished(c Claimed, o Outcome) {
	m.metrics.RunFinished(c.Name, o.Status, reason(o))
	ran := time.Duration(c.ElapsedMS+o.Stats.ElapsedMS) * time.Millisecond
	m.metrics.RunDuration(c.Name, o.Status, ran)
}
