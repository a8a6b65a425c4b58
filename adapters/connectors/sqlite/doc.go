// Package sqlite is the `sqlite` connector: a query as a source, a table as a sink, over
// database/sql with the pure-Go driver behind bun's sqliteshim.
//
// connection_url is `sqlite:PATH`, `sqlite://PATH` or a plain PATH; relative paths resolve
// against the config file's directory. Anything after a '?' is passed to the driver
// after this connector's own settings (busy_timeout 5000 ms; the sink adds WAL and
// immediate transactions; the source opens the database query_only and never creates it).
//
// Source. Values keep their storage class: INTEGER → int64, REAL → float64, TEXT →
// string, BLOB → []byte, NULL → nil (columns declared DATE/DATETIME/TIMESTAMP come back
// as time.Time, as the driver decodes them). Incremental reads wrap the query as
// `SELECT q.*, +q.CURSOR FROM (query) AS q WHERE q.CURSOR > ? ORDER BY q.CURSOR`; the extra
// `+q.CURSOR` column is the cursor's raw stored value (the unary + hides the declared type,
// so a DATETIME cursor is bookmarked exactly as stored, not as re-formatted text), and it
// is not part of the page. The source reads one row ahead so that rows sharing the last
// cursor value at a page edge are never skipped (see cursor.EdgeBookmark); when the read
// asks for exact edges (exactly-once) a page instead grows until the cursor value changes.
//
// Sink. write_mode append inserts; upsert is INSERT … ON CONFLICT(key) DO UPDATE, which
// needs a PRIMARY KEY or UNIQUE index on the key columns; delete deletes rows whose key
// matches (NULL keys match NULL); overwrite deletes every row and writes all pages in ONE
// transaction committed on Commit (Durability AtEnd). Every other mode writes each page
// in its own transaction with multi-row prepared INSERTs (Durability PerPage).
//
// Values written: bool → 0/1, time.Time → RFC 3339 text with nanoseconds, maps and lists
// → JSON text, everything else as is. create_table: true creates a missing table from
// the first page — int64 → INTEGER, float64 → REAL, bool → INTEGER, time.Time → TEXT,
// []byte → BLOB, anything else (and all-NULL columns) → TEXT — with PRIMARY KEY(key) when
// key is set, so upserts work on it.
//
// Exactly-once. The sink keeps a watermark row per state key in watermark_table (default
// sluice_watermarks, same database): Fence increments the key's epoch with INSERT … ON
// CONFLICT … RETURNING, and each page's transaction ends with `UPDATE … WHERE state_key =
// ? AND epoch = ?`, rolled back with run.ErrLeaseLost when a newer writer took the epoch.
// A watermark table of an earlier version gets its completed_by column when Fence finds
// it missing.
package sqlite
