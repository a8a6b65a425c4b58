// Package http is the REST control plane of sluice (SPEC §2.2, §2.3, §2.6, §2.9, §2.10):
// the gin router, the bearer-token auth middleware with its permission table, the run
// handlers (submit, list, get, cancel, rollback, logs with SSE follow, delete), the audit
// and connector listings, the open health and metrics routes, the ONE table mapping
// application errors to HTTP statuses and stable codes, and the OpenAPI document that
// describes all of it.
//
// It drives the application through the RunService port declared here and never reaches
// into the history directly, so every entry point shares the same submit funnel.
package http
