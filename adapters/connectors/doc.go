// Package connectors is the connector registry: it maps type names to connector
// implementations and their Specs, and is the execute.Registry (and so the
// pipeline.Catalog) the executor and config validation use.
//
// Each connector lives in its own sub-package (file, generate, stdout, sqlite); the
// builtin sub-package assembles the registry of every connector of this version. The
// registry itself imports none of them, so tests can build registries of fakes.
package connectors
