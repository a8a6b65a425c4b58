// Package notify listens for the history's PostgreSQL notifications on a dedicated
// connection and turns them into wake-ups for a cluster member (SPEC §4.3, §4.6): a
// notification on the work channel wakes the claim loop at once, one on the cancel
// channel names the run whose cancel was requested so its owner fires the token at once.
//
// The store sends those notifications INSIDE the transactions that create work or set a
// cancel flag, so only committed changes are heard. Notifications are a shortcut, never
// the only path: a listener that lost its connection reconnects with backoff, and after
// every (re)subscription it announces a wake-up and a "check every run" cancel, because
// whatever was sent while it was away is gone. Polling (cluster.Config.PollInterval)
// stays on as the fallback, and is the only mechanism on SQLite or with --poll-only.
package notify
