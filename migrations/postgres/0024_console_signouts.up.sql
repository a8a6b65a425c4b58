-- Console sign-outs (SPEC §14.8): a session cookie is a signed claim that any member with
-- the same principals accepts, so a sign-out must be remembered where every member looks —
-- the history — and outlive a restart. A row lasts until the cookie it revokes expires
-- (expires_at, unix ms); after that the cookie is refused anyway and the row is purged.
CREATE TABLE sluice_console_signouts (
    session_id TEXT NOT NULL PRIMARY KEY,
    expires_at BIGINT NOT NULL
);
CREATE INDEX sluice_console_signouts_expires ON sluice_console_signouts (expires_at);
