// Package lease owns the lease arithmetic of clustered execution (SPEC §4.4, §4.9): a
// lease's owner, fencing epoch and expiry, the renew interval, statement timeout and
// outage cutoff derived from the TTL, the fence condition every owned write checks, and
// the lease lifecycle as a transition table.
//
// Nothing here reads a clock: the store passes the DATABASE time, members pass their
// monotonic time, and tests pass whatever they like.
package lease
