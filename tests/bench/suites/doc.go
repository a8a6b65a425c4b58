// Package suites holds the benchmark suites of sluice-bench, one file per suite. All is
// the registry's list: a new suite is a file returning a harness.Suite plus one entry
// there.
package suites
