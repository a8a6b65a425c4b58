-- CHECK constraints (SPEC §14.9), as on PostgreSQL (0023 there; the lists and the
-- invariants are the same, the domains' own, held equal by a store test).
-- SQLite cannot add a constraint to a table, so each table is rebuilt as SQLite's ALTER
-- TABLE documentation prescribes: create the new table, copy every row, drop the old,
-- rename the new, recreate its indexes (there are no triggers or views). Foreign keys are
-- switched off around it (a pragma that only takes effect outside a transaction):
-- dropping sluice_runs with them on would cascade-delete every label, log line, sealed
-- secret and shard. The copy checks every row, so a history that already breaks one of
-- the invariants fails this migration naming the constraint, instead of being accepted;
-- the whole rebuild is one transaction, so it leaves the history as it was.
PRAGMA foreign_keys = OFF;
BEGIN IMMEDIATE;

CREATE TABLE sluice_runs_new (
    id               TEXT PRIMARY KEY,            -- UUIDv7: sorts by creation
    name             TEXT NOT NULL,
    tenant           TEXT NOT NULL DEFAULT '',
    pool             TEXT NOT NULL,
    status           TEXT NOT NULL,
    labels           TEXT NOT NULL DEFAULT '{}',  -- JSON object; filtering uses sluice_run_labels
    trigger_kind     TEXT NOT NULL,
    run_key          TEXT,
    run_date         TEXT NOT NULL,
    logical_at       BIGINT NOT NULL,
    serial           INTEGER NOT NULL DEFAULT 0,
    attempt          INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL,
    attempts         TEXT NOT NULL DEFAULT '[]',
    owner            TEXT,
    owner_listen     TEXT,
    lease_epoch      BIGINT NOT NULL DEFAULT 0,
    lease_expires_at BIGINT,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    timeout_secs     INTEGER,
    config           TEXT NOT NULL,
    config_sealed    INTEGER NOT NULL DEFAULT 0,
    callback         TEXT,
    template_id      TEXT,
    template_version INTEGER,
    shard_count      INTEGER NOT NULL DEFAULT 1,
    rows_read        BIGINT NOT NULL DEFAULT 0,
    rows_written     BIGINT NOT NULL DEFAULT 0,
    pages            BIGINT NOT NULL DEFAULT 0,
    bytes            BIGINT NOT NULL DEFAULT 0,
    elapsed_ms       BIGINT NOT NULL DEFAULT 0,
    error_code       TEXT,
    error_message    TEXT,
    log_lines        INTEGER NOT NULL DEFAULT 0,
    log_bytes        BIGINT NOT NULL DEFAULT 0,
    created_at       BIGINT NOT NULL,
    claimed_at       BIGINT,
    started_at       BIGINT,
    finished_at      BIGINT,
    elapsed_base_ms  BIGINT NOT NULL DEFAULT 0,
    log_truncated    INTEGER NOT NULL DEFAULT 0,
    max_active       INTEGER NOT NULL DEFAULT 1,
    retry            TEXT,
    not_before       BIGINT NOT NULL DEFAULT 0,
    traceparent      TEXT,
    CONSTRAINT sluice_runs_status_check
        CHECK (status IN ('queued', 'pending', 'running', 'sharded', 'completed', 'failed', 'cancelled')),
    CONSTRAINT sluice_runs_finished_check
        CHECK ((status IN ('completed', 'failed', 'cancelled')) = (finished_at IS NOT NULL)),
    CONSTRAINT sluice_runs_running_check
        CHECK ((status = 'running') = (owner IS NOT NULL AND lease_expires_at IS NOT NULL)),
    CONSTRAINT sluice_runs_attempt_check CHECK (attempt >= 0),
    CONSTRAINT sluice_runs_max_attempts_check CHECK (max_attempts >= 1)
);
INSERT INTO sluice_runs_new (id, name, tenant, pool, status, labels, trigger_kind, run_key, run_date,
    logical_at, serial, attempt, max_attempts, attempts, owner, owner_listen, lease_epoch,
    lease_expires_at, cancel_requested, timeout_secs, config, config_sealed, callback, template_id,
    template_version, shard_count, rows_read, rows_written, pages, bytes, elapsed_ms, error_code,
    error_message, log_lines, log_bytes, created_at, claimed_at, started_at, finished_at,
    elapsed_base_ms, log_truncated, max_active, retry, not_before, traceparent)
SELECT id, name, tenant, pool, status, labels, trigger_kind, run_key, run_date,
    logical_at, serial, attempt, max_attempts, attempts, owner, owner_listen, lease_epoch,
    lease_expires_at, cancel_requested, timeout_secs, config, config_sealed, callback, template_id,
    template_version, shard_count, rows_read, rows_written, pages, bytes, elapsed_ms, error_code,
    error_message, log_lines, log_bytes, created_at, claimed_at, started_at, finished_at,
    elapsed_base_ms, log_truncated, max_active, retry, not_before, traceparent
FROM sluice_runs;
DROP TABLE sluice_runs;
ALTER TABLE sluice_runs_new RENAME TO sluice_runs;
CREATE INDEX sluice_runs_claim ON sluice_runs (pool, id, not_before) WHERE status = 'pending';
CREATE INDEX sluice_runs_lease ON sluice_runs (lease_expires_at) WHERE status = 'running';
CREATE INDEX sluice_runs_owner ON sluice_runs (owner) WHERE status = 'running';
CREATE INDEX sluice_runs_pipeline ON sluice_runs (tenant, name, status);
CREATE INDEX sluice_runs_status ON sluice_runs (status, id);
CREATE INDEX sluice_runs_finished ON sluice_runs (finished_at) WHERE finished_at IS NOT NULL;
CREATE UNIQUE INDEX sluice_runs_run_key ON sluice_runs (tenant, name, run_key) WHERE run_key IS NOT NULL;
CREATE INDEX sluice_runs_queued ON sluice_runs (tenant, name, id) WHERE status = 'queued';
CREATE INDEX sluice_runs_tenant_status ON sluice_runs (tenant, status, id);
CREATE INDEX sluice_runs_tenant_name ON sluice_runs (tenant, name, id);
CREATE INDEX sluice_runs_due ON sluice_runs (not_before) WHERE status = 'pending' AND not_before > 0;

CREATE TABLE sluice_shards_new (
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
    elapsed_base_ms  BIGINT NOT NULL DEFAULT 0,
    not_before       BIGINT NOT NULL DEFAULT 0,
    PRIMARY KEY (run_id, shard_index),
    CONSTRAINT sluice_shards_status_check
        CHECK (status IN ('pending', 'running', 'completed', 'failed', 'cancelled')),
    CONSTRAINT sluice_shards_finished_check
        CHECK ((status IN ('completed', 'failed', 'cancelled')) = (finished_at IS NOT NULL)),
    CONSTRAINT sluice_shards_running_check
        CHECK ((status = 'running') = (owner IS NOT NULL AND lease_expires_at IS NOT NULL)),
    CONSTRAINT sluice_shards_attempt_check CHECK (attempt >= 0),
    CONSTRAINT sluice_shards_max_attempts_check CHECK (max_attempts >= 1)
);
INSERT INTO sluice_shards_new (run_id, shard_index, shard_count, pool, status, key_lo, key_hi,
    key_nulls, weight, attempt, max_attempts, owner, owner_listen, lease_epoch, lease_expires_at,
    rows_read, rows_written, pages, bytes, elapsed_ms, error_code, error_message, created_at,
    claimed_at, finished_at, elapsed_base_ms, not_before)
SELECT run_id, shard_index, shard_count, pool, status, key_lo, key_hi,
    key_nulls, weight, attempt, max_attempts, owner, owner_listen, lease_epoch, lease_expires_at,
    rows_read, rows_written, pages, bytes, elapsed_ms, error_code, error_message, created_at,
    claimed_at, finished_at, elapsed_base_ms, not_before
FROM sluice_shards;
DROP TABLE sluice_shards;
ALTER TABLE sluice_shards_new RENAME TO sluice_shards;
CREATE INDEX sluice_shards_claim ON sluice_shards (pool, weight DESC, run_id, shard_index, not_before) WHERE status = 'pending';
CREATE INDEX sluice_shards_lease ON sluice_shards (lease_expires_at) WHERE status = 'running';
CREATE INDEX sluice_shards_due ON sluice_shards (not_before) WHERE status = 'pending' AND not_before > 0;

CREATE TABLE sluice_schedule_ticks_new (
    schedule_id   TEXT NOT NULL REFERENCES sluice_schedules (id) ON DELETE CASCADE,
    instant       BIGINT NOT NULL,
    status        TEXT NOT NULL,
    reason        TEXT,
    run_id        TEXT,
    summary_count INTEGER,
    summary_first BIGINT,
    epoch         BIGINT NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (schedule_id, instant),
    CONSTRAINT sluice_schedule_ticks_status_check CHECK (status IN ('created', 'queued', 'skipped'))
);
INSERT INTO sluice_schedule_ticks_new (schedule_id, instant, status, reason, run_id, summary_count,
    summary_first, epoch, created_at)
SELECT schedule_id, instant, status, reason, run_id, summary_count, summary_first, epoch, created_at
FROM sluice_schedule_ticks;
DROP TABLE sluice_schedule_ticks;
ALTER TABLE sluice_schedule_ticks_new RENAME TO sluice_schedule_ticks;
CREATE INDEX sluice_schedule_ticks_created ON sluice_schedule_ticks (created_at);

CREATE TABLE sluice_change_requests_new (
    id             TEXT PRIMARY KEY,
    proposer       TEXT NOT NULL,
    tenant         TEXT NOT NULL DEFAULT '',
    name           TEXT NOT NULL,
    pool           TEXT NOT NULL,
    trigger_kind   TEXT NOT NULL,
    request        TEXT NOT NULL,
    request_sealed INTEGER NOT NULL DEFAULT 0,
    status         TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL,
    decided_by     TEXT,
    decided_at     BIGINT,
    run_id         TEXT,
    CONSTRAINT sluice_change_requests_status_check
        CHECK (status IN ('proposed', 'approved', 'rejected', 'expired'))
);
INSERT INTO sluice_change_requests_new (id, proposer, tenant, name, pool, trigger_kind, request,
    request_sealed, status, created_at, expires_at, decided_by, decided_at, run_id)
SELECT id, proposer, tenant, name, pool, trigger_kind, request,
    request_sealed, status, created_at, expires_at, decided_by, decided_at, run_id
FROM sluice_change_requests;
DROP TABLE sluice_change_requests;
ALTER TABLE sluice_change_requests_new RENAME TO sluice_change_requests;

COMMIT;
PRAGMA foreign_keys = ON;
