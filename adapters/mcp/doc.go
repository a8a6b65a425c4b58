// Package mcp exposes sluice to AI agents over the Model Context Protocol (SPEC §11), with
// the official Go SDK. Every tool is a thin adapter: decode the typed arguments, call the
// application use-case the REST API calls for the same thing (runs go through the one
// submit funnel), map the result. Errors are answered with the REST error codes and
// messages, through the classifier the composition root hands in, so an agent reads the
// same refusal a person would.
//
// The server is stateless: each HTTP request builds the tool set of its principal, so a
// viewer never sees a tool it may not call and no session outlives its token.
package mcp
