-- Fewer index entries per run (SPEC §14.9); see the PostgreSQL migration of this id.
-- sluice_runs_owner served no statement (runs are renewed and finished by id), so it is
-- dropped here too. sluice_runs_pipeline stays whole on SQLite: its planner uses a partial
-- index only when the query repeats the index's condition term for term, and the
-- admission lookups ask for different sets of active statuses.
DROP INDEX sluice_runs_owner;
