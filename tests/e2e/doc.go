// Package e2e runs the real sluice binary: the harness builds it once per test binary
// (without -race; SLUICE_E2E_BIN names a prebuilt one) and runs it with arguments and an
// environment, capturing stdout, stderr and the exit code.
package e2e
