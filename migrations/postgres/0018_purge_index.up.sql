-- sluice_schedule_ticks_created: the purge finds ticks recorded before the retention
-- cutoff through it instead of scanning every tick of every schedule on each pass (the
-- newest tick of each schedule, which stays, is found through the primary key).
CREATE INDEX sluice_schedule_ticks_created ON sluice_schedule_ticks (created_at);
