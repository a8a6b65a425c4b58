// Package sqlsink owns what the database/sql sinks (mysql, sqlite) share: building
// INSERT, upsert, DELETE and CREATE TABLE text from a dialect's quoting, turning page rows
// into statement arguments, the run's transaction through the write modes (one
// transaction per page, or one for the whole overwrite) and the fenced watermark update.
// How many rows go into one statement, the upsert clause and the column types stay with
// each connector, as they follow its server's limits.
package sqlsink
