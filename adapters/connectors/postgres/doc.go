// Package postgres is the `postgres` connector: a query as a source, a table as a sink,
// over pgx's low-level connection (no database/sql), one connection per source or sink.
//
// connection_url is a postgres:// or postgresql:// URL; its other parameters become
// session settings (search_path, application_name, …). Every session also sets
// DateStyle ISO and, unless the URL names one, TimeZone UTC, so COPY text produced by one
// database reads back the same in another. Errors carry PostgreSQL's own message with its
// detail, hint and context (for COPY: the line and the column); the URL's password never
// appears in them.
//
// Source. The query is prepared when the source opens (a broken query fails there) and
// streamed row by row from the first page on: memory holds a page, never the result.
// Values: smallint/integer/bigint/oid → int64; real/double → float64; numeric → string
// (every digit kept; a float64 would round); text/varchar/char/name → string; boolean →
// bool; timestamptz/timestamp/date → time.Time in UTC (±infinity → the strings
// "infinity"/"-infinity"); json/jsonb → decoded (objects map[string]any, arrays []any,
// whole numbers int64); bytea → []byte; uuid → string; arrays → []any of those values;
// anything else → its text form as PostgreSQL prints it; NULL → nil. Incremental reads
// run `SELECT * FROM (query) AS q WHERE q.CURSOR > $n ORDER BY q.CURSOR` (no WHERE on a
// first run) and bookmark the cursor's last value per page, stepping back when the next
// row shares it (see internal/pager); with exact edges (exactly-once) a page instead
// grows until the cursor value changes. A full read can pass its rows through as COPY
// text (`COPY (query) TO STDOUT`) when the sink is a PostgreSQL table that accepts them.
//
// Params. The query's ${param.*}, ${now.*} and ${backfill.*} arrive as bind parameters
// $1…$n (the bookmark follows them), typed by the param (int8, float8, bool, date,
// timestamptz; strings untyped, so the server types them from their place) — on the
// prepared read, the key-range planning and each shard's read. COPY takes no parameters:
// there each value is first stored as a bind parameter in a session setting and the query
// reads it back with current_setting(…) cast to the type the prepared read gave it.
//
// Sink. The table is named exactly as written (case-sensitive), optionally schema.table.
// Values are sent as COPY text: numbers and booleans as text, times as RFC 3339 in UTC,
// []byte as hex for bytea, maps as JSON, lists as array literals for array columns and
// JSON otherwise; PostgreSQL's input functions convert them to the column types, so a
// value that does not fit fails with the column named. When every target column is of a
// type with a binary writer (integers, float8, bool, text, varchar, bytea, timestamp[tz],
// date) and every value of a page is of the Go type that writer takes, the page goes as
// COPY BINARY instead — the same stored values for far less server CPU (copybinary.go);
// anything else goes as text, as above. write_mode append of a run whose
// pages carry no bookmarks (a full read, not exactly-once) streams every page into ONE
// COPY in one transaction, committed on Commit (Durability AtEnd): as fast as psql's
// \copy, and a failed run leaves no partial copy behind. Otherwise (incremental reads,
// exactly-once) append is one COPY and one commit per page; pages without a bookmark to
// save commit without waiting for the WAL flush, and the sink's end flushes. upsert
// copies the page into a temporary stage table and merges it with
// `INSERT … SELECT DISTINCT ON (key) … ON CONFLICT (key) DO UPDATE` (the last row of a
// key within a page wins; needs a PRIMARY KEY or UNIQUE constraint on the key); delete
// deletes the rows whose key equals a page row's key (a NULL key matches nothing);
// overwrite deletes every row and writes all pages in one transaction committed on
// Commit (Durability AtEnd), so readers see the old rows until then. Rows from a postgres
// source pass through unconverted (COPY text in, COPY text out) when every column exists
// in the table.
//
// A streamed COPY learns of a refused row as the server reads it, so the error (which
// names the COPY line and column) may surface on the page after the one holding it.
//
// column_mapping auto_map matches page columns to table columns by name (exactly, else
// ignoring case when that is unambiguous); columns the table lacks are an error naming
// them. column_mapping jsonb writes each row as one JSON object into jsonb_column, plus
// the key columns as columns of their own.
//
// create_table: true creates a missing table from the first page: int64 → bigint,
// float64 → double precision, bool → boolean, time.Time → timestamptz, []byte → bytea,
// maps and lists → jsonb, numbers beyond int64 → numeric, strings and all-NULL columns →
// text; with key set, PRIMARY KEY (key). Rows passed through from a postgres source keep
// the source columns' own types. Creators of one table (the table and the watermark
// table) take turns on a transaction-scoped advisory lock keyed on its qualified name, so
// CREATE TABLE IF NOT EXISTS finds the other's table instead of failing on pg_type's
// unique index; one outside the lock that wins anyway is caught behind a savepoint.
//
// Exactly-once (delivery: exactly_once). The sink keeps a watermark row per state key in
// watermark_table (default sluice_watermarks, in the table's schema; created when
// missing): (state_key, epoch, bookmark, rows_after, completed_by, updated_at). Fence
// increments the key's epoch in one INSERT … ON CONFLICT … RETURNING; every page then
// commits its rows and `UPDATE … SET bookmark, rows_after, completed_by WHERE state_key =
// $1 AND epoch = $2` in one transaction, rolled back with run.ErrLeaseLost when a newer
// writer took the epoch. A table of an earlier version, without completed_by, gets the
// column when Fence finds it missing.
package postgres
