// Package confine implements the confinement port of served configs (execute.Reach,
// SPEC §14.1) with the filesystem, the resolver and the dialer: it makes paths absolute
// against the first --allow-path directory, evaluates their symlinks, resolves host
// names and dials only addresses the dial policy allows, and refuses the server's own
// history database. The rules themselves are domain/reach's; this package does the I/O
// they need and nothing else.
//
// Checking a path and then opening it leaves a window in which a symlink could be
// swapped: the connectors open the returned real path, so only a directory an attacker
// can already write inside an allowed directory could race it.
package confine
