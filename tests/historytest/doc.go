// Package historytest gives application tests the real history: a migrated SQLite store
// of their own, the same code the store contract suite runs, instead of a hand-written
// fake that re-implements admission, idempotency or decisions and so tests itself.
package historytest
