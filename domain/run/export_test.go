package run

// Transition exposes the single status-changing door to the external tests, so they can
// check it against the table for every pair.
func (r *Run) Transition(to Status) error { return r.transition(to) }
