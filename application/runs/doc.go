// Package runs holds the run use-cases: the ONE submit funnel every entry point uses
// (REST, CLI client, MCP, templates, schedules, backfills, approvals, rollbacks), get and
// list, cancel, delete, rollback, the config view, logs, the audit trail and idempotency
// (SPEC §2.3, §2.4, §2.5, §2.7, §2.10, §5.4).
//
// Service is built by New from its ports (Store, the config Loader, Waker, Canceller,
// Clock, Resolver, PoolAdmission, Redactor) and the server's settings. Every call takes
// the Principal who asks and applies the rules of SPEC §2.2 that are not about routes:
// roles, and tenant principals confined to their own tenant (another tenant's run is
// run.ErrNotFound). Refusals are the sentinels of errors.go, which transports map to
// status codes; errors of the domain packages and the loader pass through unchanged.
//
// Admission of pools (SPEC §5.4) and of what older members could not run (§4.10) is a
// port: StaticPools for a server without --cluster, ClusterAdmission (PoolAdmission and
// Capabilities over the membership Roster) for a clustered one.
//
// CallbackPayload builds the completion callback of a terminal transition. It is the
// CallbackBuilder every store method that ends a run is given, so the outbox row is
// written in the transition's own transaction, whoever ends the run.
package runs
