// Package connector is the contract suite every connector runs from its own tests:
// Run(t, Harness) checks the behaviour the executor relies on — bounded pages in order,
// empty input, cancellation at page boundaries, failures that never leave output that
// looks complete, incremental bookmarks that skip nothing, and the write modes a sink
// declares.
package connector
