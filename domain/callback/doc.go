// Package callback owns the address policy of completion callbacks (SPEC §2.5): which
// URLs a callback may be sent to and which addresses may be dialled for it.
//
// Link-local ranges (169.254.0.0/16, fe80::/10) and the cloud metadata endpoints are
// refused, because a callback is a server-side request whose target the submitter
// chooses: pointed at a metadata service it could read instance credentials. Loopback
// and private ranges stay allowed — callbacks to services next to the server are the
// common case. An operator can lift the refusal for named hosts or addresses
// (--callback-allow-host).
//
// The policy is pure: it never resolves a name. The submit use-case checks the URL and
// every address the name resolves to; the sender checks again every address it is
// about to dial, so a name that changes its answer after submit gains nothing.
package callback
