package runs

import "time"

// MaxPurgeBatch is the most runs one purge transaction deletes (SPEC §14.9): a backlog
// of a million expired runs is purged in many short transactions, so a SQLite writer or
// a lease renewal never waits longer than one batch and no pass times out and rolls back
// everything it did.
const MaxPurgeBatch = 10_000

// PurgeRequest is what one purge pass deletes. A zero time deletes nothing of its kind.
type PurgeRequest struct {
	// RunsBefore: terminal runs finished before it, with their labels, logs, shards and
	// sealed secrets; membership rows whose last heartbeat is older; schedule ticks
	// recorded before it except the newest of each schedule (where the scheduler resumes).
	// Callback outbox rows stay: a run's callback is still owed after the run is gone.
	RunsBefore time.Time
	// IdempotencyBefore: idempotency keys created before it.
	IdempotencyBefore time.Time
	// AuditBefore: audit entries recorded before it and leader terms whose last heartbeat
	// is older (the newest term always stays).
	AuditBefore time.Time
	// SignoutsBefore: console sign-outs of session cookies that expired before it (the
	// cookie is refused by its own expiry then; the record is no longer needed).
	SignoutsBefore time.Time
	// BatchSize bounds the rows of each kind one transaction deletes; 0, or more than
	// MaxPurgeBatch, means MaxPurgeBatch.
	BatchSize int
}

// Batch is the effective batch size of r.
func (r PurgeRequest) Batch() int {
	if r.BatchSize <= 0 || r.BatchSize > MaxPurgeBatch {
		return MaxPurgeBatch
	}
	return r.BatchSize
}

// PurgeResult is what one purge pass deleted.
type PurgeResult struct {
	Runs  int // terminal runs (their children went with them)
	Audit int // audit entries
	// Skipped: another member was purging this history, so this one deleted nothing
	// (one purge at a time: two would contend for the same rows).
	Skipped bool
}
