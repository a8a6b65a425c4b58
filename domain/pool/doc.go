// Package pool owns execution pools (SPEC §5): the default pool, pool name validation,
// the precedence rule that picks a run's pool (request → config → default), a template's
// pool_override rule, admission of a submission against the pools live members serve,
// and when a pool that lost its last member counts as timed out.
package pool
