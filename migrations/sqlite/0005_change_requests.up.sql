-- Change requests (SPEC §9.5): a run request waiting for a second person. request is the
-- JSON of the run request, or a vault ciphertext (base64) bound to the change request id
-- when request_sealed. name and pool are kept in clear so lists need no key. A proposed
-- request past expires_at reads as expired; decisions are conditional on status and
-- expiry, so two approvers never both win.
CREATE TABLE sluice_change_requests (
    id             TEXT PRIMARY KEY,
    proposer       TEXT NOT NULL,
    tenant         TEXT NOT NULL DEFAULT '',
    name           TEXT NOT NULL,
    pool           TEXT NOT NULL,
    trigger_kind   TEXT NOT NULL,
    request        TEXT NOT NULL,
    request_sealed INTEGER NOT NULL DEFAULT 0,
    status         TEXT NOT NULL,
    created_at     BIGINT NOT NULL,
    expires_at     BIGINT NOT NULL,
    decided_by     TEXT,
    decided_at     BIGINT,
    run_id         TEXT
);
