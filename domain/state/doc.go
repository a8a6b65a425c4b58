// Package state holds bookmarks: where an incremental pipeline resumes, how a bookmark is
// encoded in each state format (SPEC §4.10), and how state keys are named (SPEC §1.6).
package state
