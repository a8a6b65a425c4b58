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
	// owner, listen, ttl ms, instance id (for the attempt record), pools (bun.In), n.
	claim string
	// claimInTx runs the claim inside an explicit (immediate) transaction.
	claimInTx bool
	// claimOutbox leases up to n due callbacks in one statement. Arguments: owner,
	// lease ms, n.
	claimOutbox string
	// closeAttempt is the attempts column with its last record ended now; its one
	// argument is the outcome.
	closeAttempt string
	// forUpdate locks the selected rows inside a transaction; SQLite's immediate
	// transactions already exclude every other writer.
	forUpdate string
	// pipelineLocks: serialise transactions about one pipeline key with an advisory
	// transaction lock (PostgreSQL). SQLite writers are serialised already.
	pipelineLocks bool
}

// q expands the {now} token of a statement.
func (s *Store) q(sql string) string {
	return strings.ReplaceAll(sql, "{now}", s.d.now)
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

// lockPipeline takes the transaction-scoped lock of a pipeline key, so that admission
// (Create) and promotion (every terminal transition) of one (tenant, name) never
// interleave. Every transaction that takes it does so before touching a run row, so the
// lock order is always pipeline key, then rows.
func (s *Store) lockPipeline(ctx context.Context, tx bun.Tx, tenant, name string) error {
	if !s.d.pipelineLocks {
		return nil
	}
	_, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock(?)", s.lockKey("pipeline", tenant, name))
	return err
}
