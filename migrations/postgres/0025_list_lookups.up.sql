-- Three more list lookups, found by `sluice-bench --suite lists` on a 1M-run history
-- (SPEC §14.9). sluice_runs_name_id: a pipeline's runs across tenants (an untenanted
-- admin's GET /v1/runs?name=), which SQLite read through (tenant, name, id) one tenant at a
-- time and sorted (31 ms at 1M runs). sluice_runs_tenant_id: a tenant principal's own list (GET /v1/runs with
-- no other filter) is one backward range of it; SQLite, having no index that both selects
-- a tenant and orders by id, sorted every run of the tenant (269 ms at 1M runs).
-- sluice_run_labels_kv_run replaces (key, value): a one-label list walks the runs
-- carrying that label newest first and stops after a page, where it read every run with
-- the label (506 ms at 1M runs on PostgreSQL for a label on 5 % of runs).
CREATE INDEX sluice_runs_name_id ON sluice_runs (name, id);
CREATE INDEX sluice_runs_tenant_id ON sluice_runs (tenant, id);
CREATE INDEX sluice_run_labels_kv_run ON sluice_run_labels (key, value, run_id);
DROP INDEX sluice_run_labels_kv;
