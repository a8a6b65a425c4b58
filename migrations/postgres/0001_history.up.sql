-- The run history. Every time is BIGINT milliseconds since the Unix epoch, taken from the
-- database clock for leases, so both dialects compare times the same way and members with
-- skewed clocks agree.
CREATE TABLE sluice_runs (
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
    serial           BOOLEAN NOT NULL DEFAULT FALSE, -- one active run per pipeline key (incremental state)
    attempt          INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL,
    attempts         JSONB NOT NULL DEFAULT '[]',   -- [{n, instance_id, claimed_at, ended_at, outcome}]
    owner            TEXT,
    owner_listen     TEXT,
    lease_epoch      BIGINT NOT NULL DEFAULT 0,
    lease_expires_at BIGINT,
    cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
    timeout_secs     INTEGER,
    config           TEXT NOT NULL,               -- raw (directives unresolved), or sealed
    config_sealed    BOOLEAN NOT NULL DEFAULT FALSE,
    callback         TEXT,                        -- JSON {url, on, extra_fields}, or sealed
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
    finished_at      BIGINT
);
CREATE INDEX sluice_runs_claim ON sluice_runs (pool, id) WHERE status = 'pending';
CREATE INDEX sluice_runs_lease ON sluice_runs (lease_expires_at) WHERE status = 'running';
CREATE INDEX sluice_runs_owner ON sluice_runs (owner) WHERE status = 'running';
CREATE INDEX sluice_runs_pipeline ON sluice_runs (tenant, name, status);
CREATE INDEX sluice_runs_status ON sluice_runs (status, id);
CREATE INDEX sluice_runs_finished ON sluice_runs (finished_at) WHERE finished_at IS NOT NULL;
CREATE UNIQUE INDEX sluice_runs_run_key ON sluice_runs (tenant, name, run_key) WHERE run_key IS NOT NULL;

CREATE TABLE sluice_run_labels (
    run_id TEXT NOT NULL REFERENCES sluice_runs (id) ON DELETE CASCADE,
    key    TEXT NOT NULL,
    value  TEXT NOT NULL,
    PRIMARY KEY (run_id, key)
);
CREATE INDEX sluice_run_labels_kv ON sluice_run_labels (key, value);

CREATE TABLE sluice_idempotency (
    scope       TEXT NOT NULL,   -- tenant, or principal when untenanted
    key         TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    run_id      TEXT NOT NULL,   -- kept after the run is deleted: a replay then answers 410
    created_at  BIGINT NOT NULL,
    PRIMARY KEY (scope, key)
);
CREATE INDEX sluice_idempotency_created ON sluice_idempotency (created_at);

-- Callbacks to send, written in the transaction of the terminal transition.
CREATE TABLE sluice_outbox (
    id           BIGSERIAL PRIMARY KEY,
    run_id       TEXT NOT NULL,
    url          TEXT NOT NULL,
    payload      TEXT NOT NULL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    next_at      BIGINT NOT NULL,
    created_at   BIGINT NOT NULL,
    claimed_by   TEXT,
    claimed_until BIGINT,
    last_error   TEXT
);
CREATE INDEX sluice_outbox_due ON sluice_outbox (next_at);

CREATE TABLE sluice_run_logs (
    run_id  TEXT NOT NULL REFERENCES sluice_runs (id) ON DELETE CASCADE,
    seq     BIGINT NOT NULL,
    at      BIGINT NOT NULL,
    level   TEXT NOT NULL,
    message TEXT NOT NULL,       -- redacted before it is written
    attrs   TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (run_id, seq)
);

CREATE TABLE sluice_state (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    format     INTEGER NOT NULL,
    updated_at BIGINT NOT NULL
);

CREATE TABLE sluice_audit (
    id      BIGSERIAL PRIMARY KEY,
    at      BIGINT NOT NULL,
    actor   TEXT NOT NULL,
    action  TEXT NOT NULL,
    run_id  TEXT,
    details TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX sluice_audit_at ON sluice_audit (at);

CREATE TABLE sluice_members (
    instance_id      TEXT PRIMARY KEY,
    host             TEXT NOT NULL,
    pid              INTEGER NOT NULL,
    listen           TEXT NOT NULL,
    version          TEXT NOT NULL,
    pools            TEXT,            -- JSON array; NULL for a member without pool support
    max_concurrent   INTEGER NOT NULL,
    in_flight        INTEGER NOT NULL DEFAULT 0,
    state_format_max INTEGER NOT NULL,
    vault_format_max INTEGER NOT NULL,
    draining         BOOLEAN NOT NULL DEFAULT FALSE,
    started_at       BIGINT NOT NULL,
    heartbeat_at     BIGINT NOT NULL,
    stopped_at       BIGINT
);
