-- elapsed_base_ms: running time of the attempts before the current claim, copied from
-- elapsed_ms by each claim, so progress can report this attempt's time and the run still
-- counts timeout_secs across attempts.
ALTER TABLE sluice_runs ADD COLUMN elapsed_base_ms BIGINT NOT NULL DEFAULT 0;
-- log_truncated: the per-run log cap was reached and its marker line written; nothing is
-- appended after it.
ALTER TABLE sluice_runs ADD COLUMN log_truncated BOOLEAN NOT NULL DEFAULT FALSE;

-- Who holds the exclusive server lock of this schema (a session advisory lock), so a second
-- server can name the holder. The row can outlive a crashed holder; the advisory lock is
-- the truth and the next holder overwrites the row.
CREATE TABLE sluice_server_lock (
    id          INTEGER PRIMARY KEY CHECK (id = 1),
    instance_id TEXT NOT NULL,
    host        TEXT NOT NULL,
    pid         INTEGER NOT NULL,
    acquired_at BIGINT NOT NULL
);
