// Command sluice-bench is the benchmark program behind `task bench`: it builds sluice,
// runs a suite of pipelines as separate processes and prints rows/s and peak RSS per
// pipeline next to a plain Go baseline. It reports numbers and asserts none, so it is
// never part of `go test` or CI. See --help for the flags and the memory check.
package main
