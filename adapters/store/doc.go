// Package store is the run history: one bun implementation of the history ports
// (runs.Store, cluster.Store, cluster.OutboxStore, execute.StateStore) for PostgreSQL and
// SQLite. The SQL is shared; the few statements that differ per database (the claim,
// JSON edits of the attempt records, row and advisory locks, the database clock) live in
// dialect_pg.go and dialect_sqlite.go.
//
// It also owns what surrounds the schema: migrations from the embedded files, the refusal
// of a schema newer than this binary, and the exclusive server lock that keeps a second
// non-clustered server off the same history.
//
// Every time is stored as BIGINT Unix milliseconds. Lease times come from the DATABASE
// clock so members with skewed clocks agree on who holds what. Driver errors are turned
// into the typed errors of domain/run here, at the edge, and no message carries the
// credentials of the history URL.
package store
