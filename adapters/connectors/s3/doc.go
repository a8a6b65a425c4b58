// Package s3 is the `s3` connector: objects of any S3-compatible store as a source and a
// sink, in CSV, JSONL or Parquet (the formats of adapters/connectors/internal/format).
//
// Addressing. `path: s3://bucket/prefix/glob` names the objects: the source lists the keys
// under the glob's literal prefix and keeps those the glob matches (`*` and `?` never
// cross a `/`, as with file globs), in key order. The sink's path is a key prefix.
// `endpoint` points at a non-AWS store and switches to path-style addressing; `region`
// defaults to us-east-1. Credentials come from access_key_id / secret_access_key (use
// ${secret:…}) or else the standard AWS chain (environment, shared files, web identity,
// and — outside confinement only — the EC2 metadata service).
//
// Confinement (SPEC §14.1). Every connection — to the store, to STS — is dialed through the
// open request's Reach, so the server's dial policy judges each resolved address; no
// proxy from the environment is used when confined.
//
// Source. CSV and JSONL objects are streamed; a body that breaks off mid-object is
// resumed with a ranged GET from the byte it reached. Parquet objects are read through
// ranged GETs, one request per row group (the row group's column chunks), so memory holds
// one row group plus a page. Mode B sharding: each key goes to shard hash(key) mod N,
// like file globs.
//
// Sink. Rows go to objects named <prefix><run>/part-<shard>-<part>.<ext>, so a re-executed
// run overwrites its own objects instead of adding new ones; max_rows_per_object rolls
// to the next part. Each object is a multipart upload whose parts are sent as pages
// arrive (memory: one part buffer plus the format's row group); uploads are completed
// only on Commit and aborted on failure or cancellation, so no partial object is ever
// visible (Durability AtEnd). A run that writes no row leaves no object.
//
// Fencing. A stale writer of a run (its lease lost while paused, the run taken over by
// another member) would aim at the same deterministic names as the new owner. The sink
// opens by writing its token into the shard's marker object
// <prefix><run>/_sluice-writer-<shard> and aborting every upload already open under the
// shard's names (an older writer's); Commit completes nothing unless the marker still
// holds its token, and fails wrapping run.ErrLeaseLost otherwise (see fence.go for why
// that closes the race). The marker is removed when its writer commits or aborts, and
// the source never reads a marker as data.
//
// Errors. Network failures, 5xx answers, throttling (429, SlowDown) and timeouts are
// marked execute.Transient and retried per request under the `retry` block; anything
// else (no such bucket, access denied, a corrupt object) fails at once, naming the
// connector, the object and the cause. Credentials never appear in errors or logs.
package s3
