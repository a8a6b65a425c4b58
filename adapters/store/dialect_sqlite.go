package store

import "github.com/uptrace/bun"

// sqliteDialect is SQLite: claims are UPDATE … WHERE id IN (SELECT … LIMIT n) inside an
// immediate transaction (the DSN sets _txlock=immediate), so the only writer at a time
// holds the database; JSON edits use json_insert/json_set.
func sqliteDialect() dialect {
	return dialect{
		name: DialectSQLite,
		now:  "(CAST(unixepoch('subsec') * 1000 AS INTEGER))",
		claim: `UPDATE sluice_runs SET status = 'running', attempt = attempt + 1,
  lease_epoch = lease_epoch + 1, owner = ?, owner_listen = ?,
  lease_expires_at = {now} + ?, claimed_at = {now}, started_at = COALESCE(started_at, {now}),
  elapsed_base_ms = elapsed_ms, cancel_requested = FALSE, not_before = 0,
  attempts = json_insert(attempts, '$[#]', json_object(
    'n', attempt + 1, 'instance_id', ?, 'claimed_at', {now}))
WHERE id IN (SELECT id FROM sluice_runs WHERE status = 'pending' AND {pools} AND not_before <= {now}
             ORDER BY id LIMIT ?)
RETURNING ` + claimedColumns(""),
		claimShards: `UPDATE sluice_shards SET status = 'running', attempt = attempt + 1,
  lease_epoch = lease_epoch + 1, owner = ?, owner_listen = ?,
  lease_expires_at = {now} + ?, claimed_at = {now}, elapsed_base_ms = elapsed_ms, not_before = 0
WHERE (run_id, shard_index) IN (SELECT run_id, shard_index FROM sluice_shards
             WHERE status = 'pending' AND {pools} AND not_before <= {now}
             ORDER BY weight DESC, run_id, shard_index LIMIT ?)
RETURNING ` + shardColumns,
		claimInTx: true,
		poolsIn:   "pool IN (?)",
		inList:    func(names []string) any { return bun.In(names) },
		claimOutbox: `UPDATE sluice_outbox SET claimed_by = ?, claimed_until = {now} + ?
WHERE id IN (SELECT id FROM sluice_outbox
             WHERE next_at <= {now} AND (claimed_until IS NULL OR claimed_until <= {now})
             ORDER BY next_at, id LIMIT ?)
RETURNING id, run_id, url, payload, attempts, created_at`,
		closeAttempt: `CASE WHEN json_array_length(attempts) > 0
  THEN json_set(attempts, '$[#-1].ended_at', {now}, '$[#-1].outcome', ?) ELSE attempts END`,
		closeAttemptErr: `CASE WHEN json_array_length(attempts) > 0
  THEN json_set(attempts, '$[#-1].ended_at', {now}, '$[#-1].outcome', ?,
    '$[#-1].error_code', ?, '$[#-1].error_message', ?) ELSE attempts END`,
		forUpdate:     "",
		pipelineLocks: false,
	}
}
