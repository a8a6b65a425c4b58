package cluster

import "time"

// countFinished counts a run this member finished: its outcome, and its running time
// over every attempt (earlier attempts' time comes with the claim).
func (m *Member) countFinished(c Claimed, o Outcome) {
	m.metrics.RunFinished(c.Name, o.Status, reason(o))
	ran := time.Duration(c.ElapsedMS+o.Stats.ElapsedMS) * time.Millisecond
	m.metrics.RunDuration(c.Name, o.Status, ran)
}

// finishedAttrs are the attributes of the "run finished" line; code only when the run
// has one, so a completed run does not log code="".
func finishedAttrs(e *execution, o Outcome) []any {
	attrs := []any{"run_id", e.claim.ID, "key", e.key(), "pipeline", e.claim.Name, "status", o.Status}
	if o.ErrorCode != "" {
		attrs = append(attrs, "code", o.ErrorCode)
	}
	return append(attrs, "rows_written", o.Stats.RowsWritten)
}
