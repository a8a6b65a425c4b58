// Package cursor compares incremental cursor values and decides which bookmark a page may
// carry. It is shared by every source that supports `replication: incremental`, so the
// rule that rows tied at a page edge are never skipped (SPEC §1.6) is written once.
package cursor
