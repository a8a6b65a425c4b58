-- The sealed secret values of a run (SPEC §7.2): value n restores the config's ${sealed:n}.
-- Kept apart from the run record and deleted in the transaction that makes the run
-- terminal, so re-claims after a failover still find them and a finished run holds tokens
-- only. The value is a vault ciphertext (base64) bound to the run id and to n.
CREATE TABLE sluice_sealed_secrets (
    run_id     TEXT NOT NULL REFERENCES sluice_runs (id) ON DELETE CASCADE,
    n          INTEGER NOT NULL,
    value      TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    PRIMARY KEY (run_id, n)
);

-- Templates (SPEC §8.1): every version is kept, runs record {id, version}. config is the
-- text as registered, or a vault ciphertext (base64) bound to the template id when
-- config_sealed. pool_override is JSON: true, or an array of pools; NULL forbids overrides.
-- tenants is JSON: "*" or an array of tenant names; NULL allows untenanted runs only.
CREATE TABLE sluice_templates (
    id            TEXT NOT NULL,
    version       INTEGER NOT NULL,
    config        TEXT NOT NULL,
    config_sealed BOOLEAN NOT NULL DEFAULT FALSE,
    pool          TEXT,
    pool_override TEXT,
    tenants       TEXT,
    created_by    TEXT NOT NULL,
    created_at    BIGINT NOT NULL,
    PRIMARY KEY (id, version)
);
