// Package mysql is the `mysql` connector for MySQL and MariaDB: a query as a source, a
// table as a sink, over database/sql with go-sql-driver/mysql and one connection per
// source or sink. Every statement is written so that MySQL 8 and MariaDB 10.11 accept it
// (backtick identifiers, `INSERT … ON DUPLICATE KEY UPDATE c = VALUES(c)`, no RETURNING).
//
// connection_url is mysql://user:password@host:port/database; other URL parameters go to
// the driver. The connector always parses times into time.Time in UTC, sets the session
// time zone to UTC (TIMESTAMP columns read and write in UTC), interpolates arguments
// into the statement text (one round trip per statement), counts matched rather than
// changed rows, and adds STRICT_ALL_TABLES to the session's sql_mode, so a value that
// does not fit a column is an error naming the column instead of a silent 0. Errors carry
// the server's message; the password never appears in them.
//
// Source. Rows stream from the server as pages are taken. Values: integer types → int64
// (BIGINT UNSIGNED above int64 → string); FLOAT/DOUBLE → float64; DECIMAL → string (every
// digit kept); DATETIME/TIMESTAMP/DATE → time.Time in UTC; BLOB/BINARY/VARBINARY/BIT →
// []byte; JSON → decoded on MySQL (MariaDB stores JSON as LONGTEXT, so there it is a
// string); other types (text, ENUM, TIME, …) → string; BOOLEAN is TINYINT(1) → int64;
// NULL → nil. Incremental reads run `SELECT * FROM (query) AS q WHERE q.CURSOR > ? ORDER
// BY q.CURSOR` with the rule for ties at page edges of internal/pager; a time bookmark is
// turned back into a DATETIME argument after describing the query.
//
// Sink. Columns are matched by name (case-insensitively, as MySQL does); columns the
// table lacks are an error naming them. append is multi-row INSERTs of at most 4 MiB of
// values each, one transaction per page; upsert is the same with ON DUPLICATE KEY UPDATE
// and needs a PRIMARY KEY or UNIQUE index on exactly the key columns (checked when the
// sink opens; the last row of a key in a page wins); delete is `DELETE … WHERE key IN
// (…)` (a NULL key matches nothing); overwrite deletes every row and writes all pages in
// one transaction committed on Commit (Durability AtEnd). Values: bool → 1/0, times as
// UTC DATETIME text, maps and lists → JSON text.
//
// create_table: true creates a missing table (InnoDB, utf8mb4) from the first page:
// int64 → BIGINT, float64 → DOUBLE, bool → BOOLEAN, time.Time → DATETIME(6), []byte →
// LONGBLOB, maps and lists → JSON, strings and all-NULL columns → LONGTEXT; key columns
// get VARCHAR(255)/VARBINARY(255) and a PRIMARY KEY. MySQL commits a transaction on any
// CREATE TABLE, so the table is created before the page's transaction and stays (empty)
// when that page fails.
//
// Exactly-once. As the postgres sink, with the watermark table (InnoDB) in the target's
// database: Fence increments the key's epoch with INSERT … ON DUPLICATE KEY UPDATE and
// reads the row back in the same transaction; every page commits with `UPDATE … WHERE
// state_key = ? AND epoch = ?`, rolled back with run.ErrLeaseLost when it matches no row.
// A target table whose engine ignores transactions (MyISAM) is refused. A watermark table
// of an earlier version gets its completed_by column when Fence finds it missing.
package mysql
