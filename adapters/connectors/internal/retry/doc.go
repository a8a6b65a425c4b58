// Package retry is the per-page `retry` block every connector shares (SPEC §14.4): transient
// errors (marked with execute.Transient) are tried again with exponential backoff and jitter,
// honouring a server's Retry-After; anything else fails at once.
package retry
