-- Schedules (SPEC §9.2): a cron on a template. params is a JSON object of param texts, or
-- a vault ciphertext (base64) bound to the schedule id when params_sealed. labels is a
-- JSON object. start_date is a local date (inclusive) in timezone, NULL = after
-- created_at.
CREATE TABLE sluice_schedules (
    id               TEXT PRIMARY KEY,
    template_id      TEXT NOT NULL,
    cron             TEXT NOT NULL,
    timezone         TEXT NOT NULL,
    start_date       TEXT,
    catchup          BOOLEAN NOT NULL DEFAULT FALSE,
    max_catchup_runs INTEGER NOT NULL DEFAULT 1,
    overlap_policy   TEXT NOT NULL,
    params           TEXT NOT NULL,
    params_sealed    BOOLEAN NOT NULL DEFAULT FALSE,
    pool             TEXT,
    labels           TEXT NOT NULL,
    paused           BOOLEAN NOT NULL DEFAULT FALSE,
    created_by       TEXT NOT NULL,
    created_at       BIGINT NOT NULL,
    updated_at       BIGINT NOT NULL
);
CREATE INDEX sluice_schedules_template ON sluice_schedules (template_id);

-- One row per due tick: the unique (schedule, instant) key makes ticks idempotent across
-- restarts and leaders. status: created | queued | skipped (with reason). A summary row
-- stands for summary_count missed ticks from summary_first to instant. epoch is the
-- leader term that wrote it.
CREATE TABLE sluice_schedule_ticks (
    schedule_id   TEXT NOT NULL REFERENCES sluice_schedules (id) ON DELETE CASCADE,
    instant       BIGINT NOT NULL,
    status        TEXT NOT NULL,
    reason        TEXT,
    run_id        TEXT,
    summary_count INTEGER,
    summary_first BIGINT,
    epoch         BIGINT NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (schedule_id, instant)
);

-- The scheduler's leader term (SPEC §9.3): one row, its epoch bumped by every new leader;
-- every tick insert checks it (fencing). backend_pid is the leader's lock session, so a
-- standby that sees heartbeat_at older than the TTL can terminate it.
CREATE TABLE sluice_scheduler_term (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    epoch        BIGINT NOT NULL,
    instance_id  TEXT NOT NULL,
    backend_pid  INTEGER,
    heartbeat_at BIGINT NOT NULL
);

-- Every leader term: who led and until when. stopped_at is set only by a clean stop; a
-- crashed leader's row keeps its last heartbeat and no stop time.
CREATE TABLE sluice_leaders (
    epoch        BIGINT PRIMARY KEY,
    instance_id  TEXT NOT NULL,
    host         TEXT NOT NULL,
    pid          INTEGER NOT NULL,
    version      TEXT NOT NULL,
    started_at   BIGINT NOT NULL,
    heartbeat_at BIGINT NOT NULL,
    stopped_at   BIGINT
);

-- max_active: how many runs of a serial run's pipeline key may be active at once; more
-- wait queued and are promoted oldest first as active ones end (a backfill's max_active).
ALTER TABLE sluice_runs ADD COLUMN max_active INTEGER NOT NULL DEFAULT 1;
