// Package file is the `file` connector: CSV, JSONL and Parquet files as a source (a local
// path, a glob, or one http(s):// URL for CSV and JSONL) and as a sink (a local path). The
// formats themselves live in adapters/connectors/internal/format, shared with `s3`.
//
// Source. Files of a glob are read one after another in sorted order, streamed through
// large buffers; memory holds one page. CSV: the header row names the columns (or col1,
// col2, … with header: false), every value is a string, and a row with a different
// number of fields is an error naming the file and line. JSONL: each non-blank line is a
// JSON object; a page's columns are the union of its rows' keys in first-seen order
// (missing keys are nil); a number is an int64 when written without fraction or exponent
// and fits, else a float64. Page columns may therefore differ between pages. Parquet:
// read one row group at a time, types mapped as SPEC §14.4 says (see package format).
//
// Incremental source. Files are not sorted by the cursor, so the bookmark of a read can
// only be known once every file was read: rows whose cursor value is greater than the
// bookmark are emitted in file order, and only the LAST page carries a bookmark (the
// greatest cursor value read); earlier pages carry none, so an interrupted read resumes
// from the previous bookmark and nothing is skipped. Values compare as numbers when both
// parse as numbers, else as text. A row whose cursor is missing or null is emitted
// on a first read and never after a bookmark exists (like SQL NULL).
//
// Sink. Output goes to a temp file next to the target (.NAME.sluice-tmp-*), renamed over
// the target on Commit, so readers see the old file or the complete new one and a failed
// run leaves nothing that looks complete (Durability AtEnd). write_mode overwrite
// replaces the file; append copies the existing file into the temp file first and then
// appends, which keeps the replacement atomic at the cost of one copy per run (changes
// made to the file by someone else during the run are lost). CSV writes a header from
// the first page (an appended-to file keeps its header, and pages are mapped onto it); a
// column not in the header is an error naming it. Parquet takes its schema from the first
// page (compression, row_group_rows) and cannot be appended to. JSONL writes keys in column order,
// times as RFC 3339 with nanoseconds, bytes as base64, and whole floats with a ".0".
package file
