package store

import "github.com/uptrace/bun/dialect/pgdialect"

// pgDialect is PostgreSQL: FOR UPDATE SKIP LOCKED claims, jsonb attempt records, and
// advisory locks. The clock is statement_timestamp(): one value per statement, so a
// claim's claimed_at, started_at and attempt record agree (clock_timestamp() moves
// between calls inside one statement), yet fresh for each statement of a transaction
// (now() is the start of the transaction and would judge leases by a stale clock).
func pgDialect() dialect {
	return dialect{
		name: DialectPostgres,
		now:  "((extract(epoch from statement_timestamp())*1000)::bigint)",
		claim: `UPDATE sluice_runs r SET status = 'running', attempt = r.attempt + 1,
  lease_epoch = r.lease_epoch + 1, owner = ?, owner_listen = ?,
  lease_expires_at = {now} + ?, claimed_at = {now}, started_at = COALESCE(r.started_at, {now}),
  elapsed_base_ms = r.elapsed_ms, cancel_requested = FALSE, not_before = 0,
  attempts = r.attempts || jsonb_build_array(jsonb_build_object(
    'n', r.attempt + 1, 'instance_id', ?::text, 'claimed_at', {now}))
FROM (SELECT id FROM sluice_runs WHERE status = 'pending' AND {pools} AND not_before <= {now}
      ORDER BY id LIMIT ? FOR UPDATE SKIP LOCKED) c
WHERE r.id = c.id
RETURNING ` + claimedColumns("r."),
		claimShards: `UPDATE sluice_shards s SET status = 'running', attempt = s.attempt + 1,
  lease_epoch = s.lease_epoch + 1, owner = ?, owner_listen = ?,
  lease_expires_at = {now} + ?, claimed_at = {now}, elapsed_base_ms = s.elapsed_ms, not_before = 0
FROM (SELECT run_id, shard_index FROM sluice_shards WHERE status = 'pending' AND {pools} AND not_before <= {now}
      ORDER BY weight DESC, run_id, shard_index LIMIT ? FOR UPDATE SKIP LOCKED) c
WHERE s.run_id = c.run_id AND s.shard_index = c.shard_index
RETURNING ` + qualify("s.", shardColumns),
		claimOutbox: `UPDATE sluice_outbox o SET claimed_by = ?, claimed_until = {now} + ?
FROM (SELECT id FROM sluice_outbox
      WHERE next_at <= {now} AND (claimed_until IS NULL OR claimed_until <= {now})
      ORDER BY next_at, id LIMIT ? FOR UPDATE SKIP LOCKED) c
WHERE o.id = c.id
RETURNING o.id, o.run_id, o.url, o.payload, o.attempts, o.created_at`,
		// jsonb_set is strict: on an empty array the new value is NULL, and COALESCE keeps
		// the column as it was.
		closeAttempt: `COALESCE(jsonb_set(attempts, '{-1}',
  (attempts -> -1) || jsonb_build_object('ended_at', {now}, 'outcome', ?::text)), attempts)`,
		// The attempt's error goes in as two keys; NULLs (an attempt that did not fail)
		// read back as absent.
		closeAttemptErr: `COALESCE(jsonb_set(attempts, '{-1}',
  (attempts -> -1) || jsonb_build_object('ended_at', {now}, 'outcome', ?::text,
    'error_code', ?::text, 'error_message', ?::text)), attempts)`,
		poolsIn:           "pool = ANY(?::text[])",
		inList:            func(names []string) any { return pgdialect.Array(names) },
		forUpdate:         " FOR UPDATE",
		forShare:          " FOR SHARE",
		pipelineLocks:     true,
		dataModifyingWith: true,
	}
}
