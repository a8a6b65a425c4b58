-- Indexes for the run lists of a large history (SPEC §14.9). Lists are newest first by id
-- (UUIDv7), so each index ends in id: a filtered page is one backward index range that
-- stops after LIMIT rows, instead of a walk of the primary key that filters heap rows
-- (a rare combination) or a fetch and sort of every matching row (a common one).
-- sluice_runs_tenant_status: a tenant's runs in one status (GET /v1/runs?status= for a
-- tenant principal). sluice_runs_tenant_name: a pipeline's runs, newest first; the older
-- sluice_runs_pipeline (tenant, name, status) stays for admission's active-run lookups.
CREATE INDEX sluice_runs_tenant_status ON sluice_runs (tenant, status, id);
CREATE INDEX sluice_runs_tenant_name ON sluice_runs (tenant, name, id);
