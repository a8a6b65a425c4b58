// Package reach owns the confinement rules of served configs (SPEC §14.1): which local
// paths a connector may open, which hosts it may dial, and that the server's own history
// is never a connector's target.
//
// A config submitted to `sluice serve` is code the server runs for whoever submitted it,
// so without these rules an operator could read the server's environment through
// /proc/self/environ, overwrite the audit log through a sink pointed at the history, or
// probe the cloud metadata service. `sluice run` executes its user's own file and is not
// confined.
//
// The rules are pure: they judge cleaned absolute paths whose symlinks were already
// evaluated and addresses that were already resolved. The adapter that implements the
// application's confinement port does that I/O and asks these rules about the result,
// both when a run is submitted and again when the connector opens or dials, after
// directives and params are resolved.
package reach
