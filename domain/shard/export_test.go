package shard

// Transition exposes the single status-changing door to the external tests.
func (s *Shard) Transition(to Status) error { return s.transition(to) }
