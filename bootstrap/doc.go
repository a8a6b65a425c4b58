// Package bootstrap is the composition root: it builds the `sluice` command tree with real
// adapters and runs it. Each command group is wired in its own file (local.go for run and
// validate, serve*.go for serve with cluster.go for its --cluster wiring, migrate.go for
// migrate); Main lists the groups, so a new command is one file plus one line. `sluice
// serve` is an fx graph (serve_app.go) whose start and stop hooks give the start sequence
// and the drain-first shutdown; this is the only package that imports go.uber.org/fx.
package bootstrap
