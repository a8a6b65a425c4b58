// Package cli is the command-line driving adapter (cobra): `sluice run`, `validate` and
// `version`, the exit-code rule (0 success, 1 pipeline failure, 2 config or usage error)
// and the flag/environment rule of SPEC §2.12 (every flag has SLUICE_<FLAG>). It never
// imports another adapter: bootstrap hands it what it needs through Local and Info.
package cli
