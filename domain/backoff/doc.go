// Package backoff computes exponential backoff delays with jitter. It is pure: the caller
// supplies the random draw, so a test (or a fake clock) can pin every delay. Per-page retries
// of connectors (SPEC §14.4) and run-level retries (§14.5) share it so both back off alike.
package backoff
