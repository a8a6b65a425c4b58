// Package pager cuts a stream of rows into pages for the SQL sources and decides each
// page's bookmark, so the rule that rows sharing a cursor value at a page edge are never
// skipped (SPEC §1.6) and the exact page edges exactly-once delivery needs are written
// once for every database.
package pager
