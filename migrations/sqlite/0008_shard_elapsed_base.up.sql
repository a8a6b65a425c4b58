-- elapsed_base_ms: running time of a shard's attempts before the current claim, copied
-- from elapsed_ms by the claim, as for runs (0002): every write of the attempt's counters
-- stores elapsed_ms = elapsed_base_ms + the attempt's time, so elapsed_ms counts across
-- attempts and timeout_secs bounds each shard's running time across its attempts (§3).
ALTER TABLE sluice_shards ADD COLUMN elapsed_base_ms BIGINT NOT NULL DEFAULT 0;
