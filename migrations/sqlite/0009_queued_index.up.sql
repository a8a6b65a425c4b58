-- sluice_runs_queued: a pipeline key's oldest queued run, which every terminal transition
-- looks up to promote it. Without it the lookup walks the status index in id order
-- through the queued runs of every other key (a long serial queue elsewhere slowed each
-- finish); with it, the key's queued runs are one index range, oldest first. Only queued
-- rows are in it, so the other transitions do not pay for it.
CREATE INDEX sluice_runs_queued ON sluice_runs (tenant, name, id) WHERE status = 'queued';
