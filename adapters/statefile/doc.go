// Package statefile keeps bookmarks in one local JSON file, the default state store of
// `sluice run` (SPEC §1.6). Saves are atomic (a temp file, fsync, rename) and guarded by an
// advisory lock on a sidecar file, so two processes sharing a data directory never lose
// each other's bookmarks or leave a torn file.
package statefile
