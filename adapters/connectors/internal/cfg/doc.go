// Package cfg reads typed values out of a connector's config map and holds the config
// keys several connectors share (batch_size, query, write_mode, key, create_table).
//
// Configs reach connectors already validated against their Spec, but connectors are also
// opened directly (tests, benchmarks), so every accessor tolerates the loose shapes a
// decoder produces (int vs int64 vs float64, []any vs []string) and reports a wrong type
// with the key's name instead of panicking.
package cfg
