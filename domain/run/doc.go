// Package run owns the Run aggregate: its statuses and the transition table between them
// (SPEC §3), the attempt and reclaim rules, the error codes a run can end with, the trigger
// kinds, and the typed sentinel errors (ErrNotFound, ErrConflict, ErrLeaseLost,
// ErrInvalidTransition) that every port of the history reports with.
//
// The store persists runs in SQL and applies the same rules in conditional statements;
// it rebuilds a Run through Rehydrate and reads it back through Snapshot, and it asks
// CanTransition whenever it decides a status change itself.
package run
