-- Run keys of schedule ticks name their schedule (SPEC §9.2 amended):
-- schedule:<schedule id>:<instant> instead of schedule:<instant>, so two schedules of one
-- template tick into two runs and overlap is judged per schedule. Ticks stay as they were
-- (keyed by schedule and instant, pointing at their runs); each run a tick created gets
-- the key of its schedule. A run two schedules' ticks point at (collapsed before this
-- change) takes the key of the schedule whose tick was recorded first; the other tick
-- still points at it.
UPDATE sluice_runs
SET run_key = 'schedule:' || (
        SELECT t.schedule_id FROM sluice_schedule_ticks t
        WHERE t.run_id = sluice_runs.id
        ORDER BY t.created_at, t.schedule_id LIMIT 1
    ) || ':' || substr(run_key, 10)
WHERE trigger_kind = 'schedule'
  AND run_key LIKE 'schedule:____-__-__T__:__:__Z'
  AND EXISTS (SELECT 1 FROM sluice_schedule_ticks t WHERE t.run_id = sluice_runs.id);
