// Package lease owns the lease arithmetic of clustered execution (SPEC §4.4, §4.9): the
// Ref a member holds (id and fencing epoch), the renew interval, statement timeout and
// outage cutoff derived from the TTL, and the checks of --lease-ttl-secs and
// --cluster-poll-secs.
//
// Expiry and fencing are decided by the DATABASE clock inside the store's conditional
// writes, so there is no Go-side lease value to compare against: a second copy of that
// rule here would drift from the SQL that actually decides.
package lease
