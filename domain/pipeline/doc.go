// Package pipeline is the config model of a pipeline (SPEC §1): the document tree a config
// is decoded into, the directive syntax, validation that reports every error with its path,
// and the connector Spec that drives both validation and the JSON Schema of each connector.
// Parsing only: resolving directives does I/O and lives in application/execute.
package pipeline
