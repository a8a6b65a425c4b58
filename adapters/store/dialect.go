package store

import (
	"context"
	"hash/fnv"
	"strings"

	"github.com/uptrace/bun"
)

// dialect holds the SQL that differs between PostgreSQL and SQLite. Statements use the
// token {now} for the database clock in Unix milliseconds; Store.q expands it.
type dialect struct {
	name string
	// now is the database clock as BIGINT Unix milliseconds.
	now string
	// claim moves up to n pending runs of pools to running in one statement. Arguments:
	// owner, listen, ttl ms, instance id (for the attempt record), pools (see inPools), n.
	claim string
	// claimShards moves up to n pending shards of pools to running in one statement,
	// largest first. Arguments: owner, listen, ttl ms, pools (see inPools), n.
	claimShards string
	// poolsIn is the claims' condition on several pools, with inList the form of its one
	// argument: bun.In for SQLite's IN (?), an array for PostgreSQL's = ANY(?), which
	// also goes as one parameter of a prepared statement.
	poolsIn string
	inList  func(names []string) any
	// claimInTx runs the claim inside an explicit (immediate) transaction.
	claimInTx bool
	// claimOutbox leases up to n due callbacks in one statement. Arguments: owner,
	// lease ms, n.
	claimOutbox string
	// closeAttempt is the attempts column with its last record ended now; its one
	// argument is the outcome.
	closeAttempt string
	// closeAttemptErr is closeAttempt with the attempt's error; arguments: the outcome,
	// the error code and message (NULL for none).
	closeAttemptErr string
	// forUpdate locks the selected rows inside a transaction; SQLite's immediate
	// transactions already exclude every other writer.
	forUpdate string
	// forShare share-locks the selected rows (the scheduler term a tick insert checks).
	forShare string
	// pipelineLocks: serialise transactions about one pipeline key with an advisory
	// transaction lock (PostgreSQL). SQLite writers are serialised already.
	pipelineLocks bool
	// dataModifyingWith: INSERT … inside WITH of another statement (PostgreSQL), so a
	// finish writes its log lines in its status UPDATE's statement.
	dataModifyingWith bool
}

// q expands the {now} token of a statement.
func (s *Store) q(sql string) string {
	return strings.ReplaceAll(sql, "{now}", s.d.now)
}

// inPools fills a claim's {pools} condition and returns its argument, and whether the
// claim may be a prepared statement. One pool — the common case — is an equality, which
// walks the claim index in id order and stops at the batch, whatever the plan. Several
// pools are a list, which a generic plan, blind to its length, joins against the whole
// table: that claim goes as text, planned for its list each time.
func (s *Store) inPools(query string, pools []string) (string, any, bool) {
	if len(pools) == 1 {
		return strings.Replace(query, "{pools}", "pool = ?", 1), pools[0], true
	}
	return strings.Replace(query, "{pools}", s.d.poolsIn, 1), s.d.inList(pools), false
}

// lockKey derives a 64-bit advisory-lock key from parts, always including the schema so
// histories in different schemas of one database never contend.
func (s *Store) lockKey(parts ...string) int64 {
	h := fnv.New64a()
	_, _ = h.Write([]byte("sluice\x00" + s.schema))
	for _, p := range parts {
		_, _ = h.Write([]byte{0})
		_, _ = h.Write([]byte(p))
	}
	return int64(h.Sum64()) //nolint:gosec // a hash reinterpreted as a signed key on purpose
}

// lockPipeline takes the transaction-scoped EXCLUSIVE lock of a pipeline key. Admission
// decisions that depend on the key's other runs take it (a serial run queued behind an
// active one, a run_key's uniqueness), as does the stranded-queue sweep. Every
// transaction that takes it does so before touching a run row, so the lock order is
// always pipeline key, then rows.
func (s *Store) lockPipeline(ctx context.Context, tx bun.Tx, tenant, name string) error {
	if !s.d.pipelineLocks {
		return nil
	}
	_, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", s.lockKey("pipeline", tenant, name))
	return err
}

// lockPipelineShared takes the SHARED lock of a pipeline key: terminal transitions
// (which promote the key's oldest queued run) hold it, so they never interleave with an
// exclusive admission decision — a serial run is never queued behind a run whose end
// could not see it — but they no longer wait for each other: runs of one busy pipeline
// ending one at a time was what capped a single node's throughput. promote makes two
// ends that both matter to a queued run take turns on the queued row instead.
func (s *Store) lockPipelineShared(ctx context.Context, tx bun.Tx, tenant, name string) error {
	if !s.d.pipelineLocks {
		return nil
	}
	_, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock_shared(?)", s.lockKey("pipeline", tenant, name))
	return err
}
