// Package cluster runs claimed work. A Member claims pending runs of its pools up to its
// free capacity, executes each under its own cancel token, keeps their leases (renewal,
// reclaim of expired leases, cancel propagation, heartbeats), hands runs back on drain or
// history outage, sends completion callbacks from the outbox and purges old runs
// (SPEC §2.5, §2.7, §2.8, §3, §4).
//
// A single-node server runs the same code as one member of a one-member cluster; the
// only difference is Config.Exclusive, which reclaims runs a previous process left
// running as soon as it starts.
//
// Wake-ups are polled every PollInterval; Deps.Notifications (PostgreSQL LISTEN) makes
// new work and cancel requests act at once on top of that. With PoolWaitTimeout the lease
// loop also fails runs of pools nobody serves (SPEC §5.5). Membership answers the cluster
// block of /readyz from the live membership rows.
//
// Every write about an owned run is fenced by (owner, epoch) in the Store; a write that
// answers run.ErrLeaseLost means another member owns the run now, so this member stops it
// and discards its result without retrying.
package cluster
