// Package format holds the file formats the object connectors share — CSV, JSONL and
// Parquet readers and writers — so that `file` and `s3` read and write each format the
// same way and a format is written once.
//
// Readers yield one row at a time from one object (a file, an S3 object); a Scanner
// turns a sequence of objects into pages of at most batch_size rows, applying the
// incremental filter (SPEC §1.3). Writers encode pages into an io.Writer and are
// finished by Close, which writes what a format keeps until the end (a Parquet footer).
//
// Parquet is read one row group at a time: a reader whose io.ReaderAt can prefetch
// (Prefetcher) is asked for the row group's byte range before it is decoded, so memory
// holds one row group plus the page being built. Types map as SPEC §14.4 says: ints →
// int64, floats → float64, bool, string, binary → []byte, timestamps → time.Time (UTC),
// date → time.Time at midnight UTC, decimal → its exact decimal text, lists and maps →
// JSON text. The writer infers its schema from the first page the way the SQL sinks'
// `create_table` does (each column's first non-null value), writes every column
// optional, and rolls a row group every row_group_rows rows.
//
// Errors name the object and, where there is one, the line or row group; they never quote
// row data (SPEC §14.1). The connector prefixes its own name.
package format
