-- CHECK constraints (SPEC §14.9): the database itself refuses a row no code path may
-- write, so a bug in one statement cannot leave a run half terminal or running without
-- an owner for the lease sweep to trip over. The status lists are the domains' own
-- (run.Statuses, shard.Statuses, schedule outcomes, approvals.Statuses); a store test
-- holds them equal. Adding a constraint validates every existing row, so a history that
-- already breaks one fails this migration and names the constraint, instead of being
-- silently accepted.
--   terminal ⇔ finished_at set: a retried run back in pending has finished_at cleared.
--   running ⇔ owner and lease set: every claim sets both, every release clears both.
ALTER TABLE sluice_runs
    ADD CONSTRAINT sluice_runs_status_check
        CHECK (status IN ('queued', 'pending', 'running', 'sharded', 'completed', 'failed', 'cancelled')),
    ADD CONSTRAINT sluice_runs_finished_check
        CHECK ((status IN ('completed', 'failed', 'cancelled')) = (finished_at IS NOT NULL)),
    ADD CONSTRAINT sluice_runs_running_check
        CHECK ((status = 'running') = (owner IS NOT NULL AND lease_expires_at IS NOT NULL)),
    ADD CONSTRAINT sluice_runs_attempt_check CHECK (attempt >= 0),
    ADD CONSTRAINT sluice_runs_max_attempts_check CHECK (max_attempts >= 1);

ALTER TABLE sluice_shards
    ADD CONSTRAINT sluice_shards_status_check
        CHECK (status IN ('pending', 'running', 'completed', 'failed', 'cancelled')),
    ADD CONSTRAINT sluice_shards_finished_check
        CHECK ((status IN ('completed', 'failed', 'cancelled')) = (finished_at IS NOT NULL)),
    ADD CONSTRAINT sluice_shards_running_check
        CHECK ((status = 'running') = (owner IS NOT NULL AND lease_expires_at IS NOT NULL)),
    ADD CONSTRAINT sluice_shards_attempt_check CHECK (attempt >= 0),
    ADD CONSTRAINT sluice_shards_max_attempts_check CHECK (max_attempts >= 1);

ALTER TABLE sluice_schedule_ticks
    ADD CONSTRAINT sluice_schedule_ticks_status_check
        CHECK (status IN ('created', 'queued', 'skipped'));

ALTER TABLE sluice_change_requests
    ADD CONSTRAINT sluice_change_requests_status_check
        CHECK (status IN ('proposed', 'approved', 'rejected', 'expired'));
