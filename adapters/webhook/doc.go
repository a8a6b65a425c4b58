// Package webhook owns the sending of completion callbacks (SPEC §2.5): one signed JSON
// POST per attempt, answered with the HTTP status. Whether to retry is decided by the
// caller (application/cluster); this package decides only whether a request may be sent.
//
// The address policy lives in domain/callback. It is applied here to the addresses
// actually dialled: the sender resolves the host itself, refuses the delivery when any
// answer is refused, and then dials only the addresses it checked. A name that resolves
// to an allowed address at submit (or at the check) and to a metadata address at connect
// time therefore gains nothing. Proxies from the environment are ignored for the same
// reason: a proxy would resolve and dial out of the policy's sight.
package webhook
