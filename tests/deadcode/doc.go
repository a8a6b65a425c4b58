// Package deadcode holds the test that the domain has no function production never
// reaches: it runs golang.org/x/tools/cmd/deadcode (as a pinned tool, not a go.mod
// dependency) over the sluice binary and fails on every unreachable function under
// domain/. There is no allow-list: such a function is wired in or deleted.
//
// A domain rule that nothing calls is worse than none: readers trust it while the real
// decision is made elsewhere (ARCHITECTURE "Wave 2 additions").
package deadcode
