-- Run retries (SPEC §14.5). retry: the run's policy as JSON {max_attempts, initial_secs,
-- max_secs, multiplier, on}, NULL when a failure is final. not_before: when a pending run
-- (or shard) that failed a retryable attempt may be claimed again, in Unix milliseconds
-- of the database clock; 0 when it does not wait, so the claim's condition
-- (not_before <= now) is a plain comparison the claim index can evaluate.
ALTER TABLE sluice_runs ADD COLUMN retry TEXT;
ALTER TABLE sluice_runs ADD COLUMN not_before BIGINT NOT NULL DEFAULT 0;
ALTER TABLE sluice_shards ADD COLUMN not_before BIGINT NOT NULL DEFAULT 0;
-- The claim indexes carry not_before: a claim walks a pool's pending rows in its order
-- and skips the ones not yet due from the index entry, without visiting the row.
DROP INDEX sluice_runs_claim;
CREATE INDEX sluice_runs_claim ON sluice_runs (pool, id, not_before) WHERE status = 'pending';
DROP INDEX sluice_shards_claim;
CREATE INDEX sluice_shards_claim ON sluice_shards (pool, weight DESC, run_id, shard_index, not_before) WHERE status = 'pending';
-- The earliest waiting retry, which the claim loop sleeps until: only waiting rows are in
-- these, so the lookup is one index probe and other transitions do not pay for them.
CREATE INDEX sluice_runs_due ON sluice_runs (not_before) WHERE status = 'pending' AND not_before > 0;
CREATE INDEX sluice_shards_due ON sluice_shards (not_before) WHERE status = 'pending' AND not_before > 0;
