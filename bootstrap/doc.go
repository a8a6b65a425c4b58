// Package bootstrap is the composition root: it builds the `sluice` command tree with real
// adapters and runs it. Each command group is wired in its own file (local.go for run and
// validate); Main lists the groups, so a new command is one file plus one line.
package bootstrap
