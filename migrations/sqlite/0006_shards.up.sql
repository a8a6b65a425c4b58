-- The shards of sharded runs (SPEC §6). A shard is claimed, leased, fenced, reclaimed and
-- finished like a run, with its own owner, epoch and attempts; it inherits the parent's
-- pool. Rows are inserted by the coordinator in the transaction that moves the parent to
-- sharded, and go with the parent (ON DELETE CASCADE).
--   shard_count: how many shards the plan has (hash buckets take the path modulo it).
--   key_lo, key_hi: the inclusive key range of a key-range shard; NULL for a hash bucket.
--   key_nulls: this shard also reads the rows whose key is NULL.
--   weight: the planner's size estimate; claims take the largest first.
CREATE TABLE sluice_shards (
    run_id           TEXT NOT NULL REFERENCES sluice_runs (id) ON DELETE CASCADE,
    shard_index      INTEGER NOT NULL,
    shard_count      INTEGER NOT NULL,
    pool             TEXT NOT NULL,
    status           TEXT NOT NULL,
    key_lo           BIGINT,
    key_hi           BIGINT,
    key_nulls        INTEGER NOT NULL DEFAULT 0,
    weight           BIGINT NOT NULL DEFAULT 0,
    attempt          INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL,
    owner            TEXT,
    owner_listen     TEXT,
    lease_epoch      BIGINT NOT NULL DEFAULT 0,
    lease_expires_at BIGINT,
    rows_read        BIGINT NOT NULL DEFAULT 0,
    rows_written     BIGINT NOT NULL DEFAULT 0,
    pages            BIGINT NOT NULL DEFAULT 0,
    bytes            BIGINT NOT NULL DEFAULT 0,
    elapsed_ms       BIGINT NOT NULL DEFAULT 0,
    error_code       TEXT,
    error_message    TEXT,
    created_at       BIGINT NOT NULL,
    claimed_at       BIGINT,
    finished_at      BIGINT,
    PRIMARY KEY (run_id, shard_index)
);
CREATE INDEX sluice_shards_claim ON sluice_shards (pool, weight DESC, run_id, shard_index) WHERE status = 'pending';
CREATE INDEX sluice_shards_lease ON sluice_shards (lease_expires_at) WHERE status = 'running';
