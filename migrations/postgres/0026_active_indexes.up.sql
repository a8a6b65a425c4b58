-- Fewer index entries per run (SPEC §14.9). A claim and a finish each change a run's
-- status, so neither can be a HOT update: each inserts an entry into every index of
-- sluice_runs whose predicate the new row meets, and that write amplification is most of
-- PostgreSQL's share of a trivial run. Two of those indexes served nothing a run needs:
--   sluice_runs_owner (owner) of running runs: no statement selects by owner alone (a
--   renewal and a finish name their runs by id; an orphan sweep asks for every owner but
--   one, which a walk of the running runs answers), so it only cost each claim an entry.
--   sluice_runs_pipeline (tenant, name, status) held every run ever made. Its readers are
--   admission's lookups of a key's active runs (serial admission, promotion, the stranded
--   sweep, a schedule's overlap check); a list by pipeline reads sluice_runs_tenant_name.
--   Partial on the active statuses it holds only the runs in flight: a finish inserts
--   nothing into it, and the lookups walk a key's few active runs instead of skipping its
--   whole history by status.
-- Claim and finish together now insert 15 entries instead of 17.
DROP INDEX sluice_runs_owner;
DROP INDEX sluice_runs_pipeline;
CREATE INDEX sluice_runs_active ON sluice_runs (tenant, name, status)
    WHERE status IN ('queued', 'pending', 'running', 'sharded');
