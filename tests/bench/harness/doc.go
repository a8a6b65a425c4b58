// Package harness is the machinery of the sluice benchmark program: the suite registry,
// the timing of one child process (wall time and peak RSS), the row counts that prove a
// run really moved its rows, and the table the numbers are printed as.
//
// Benchmarks report; they never assert a time and never run in CI. The _test files here
// are fast unit tests of these helpers, not benchmarks.
package harness
