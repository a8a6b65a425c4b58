// Package http is the http source (SPEC §14.4): it reads the records of a paginated JSON
// API — the array at records_path of each answer — page by page (cursor, offset, page
// number or Link header), paced by rate_limit_per_sec, incrementally through cursor_param,
// with 429 and 5xx answers retried per request (honouring Retry-After). Every connection
// is dialed through the run's Reach; header values (credentials from ${secret:}) and query
// strings never appear in errors or logs.
package http
