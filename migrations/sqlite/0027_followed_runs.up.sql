-- Who hears the end of a run (SPEC §14.9); see the PostgreSQL migration of this id. SQLite
-- histories send no notifications, but the column keeps both schemas and every store
-- answer alike.
ALTER TABLE sluice_runs ADD COLUMN followed INTEGER NOT NULL DEFAULT 0;
