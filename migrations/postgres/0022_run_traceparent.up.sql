-- The W3C traceparent of a run's submission (SPEC §14.6): the member that claims the run
-- starts its spans under it, so the execution joins the submitter's trace. NULL when the
-- submission was not traced.
ALTER TABLE sluice_runs ADD COLUMN traceparent TEXT;
