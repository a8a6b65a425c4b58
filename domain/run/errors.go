package run

import (
	"errors"
	"slices"
)

// The sentinel errors every port of the history reports with. Adapters translate their
// driver errors into these at their edge, and each transport maps them to one status, so
// a caller never has to know which database answered.
var (
	// ErrNotFound: the id names no run (or shard, template, … — the message says which).
	ErrNotFound = errors.New("not found")
	// ErrConflict: the change collides with what is stored — a unique key (run_key,
	// idempotency key) is taken, or the item's state forbids the change (deleting a run
	// that is not terminal).
	ErrConflict = errors.New("conflict")
	// ErrLeaseLost: a fenced write matched zero rows, because another member owns the
	// item now, the epoch moved on, or the lease expired by the database clock. The
	// caller stops the item and discards its result; it never retries the write.
	ErrLeaseLost = errors.New("lease lost")
	// ErrInvalidTransition: the lifecycle does not allow the requested status change.
	// TransitionError (and the transition errors of shards, leases and sealed secrets)
	// wrap it.
	ErrInvalidTransition = errors.New("invalid transition")
	// ErrUnavailable: the history did not answer (connection refused or lost, statement
	// timeout, database busy). The request may succeed later or on another member; a
	// clustered member never falls back to anything else (history_unavailable, 503).
	ErrUnavailable = errors.New("history unavailable")
)

// ErrorCode is the stable code of why a run failed (SPEC §2.9). Transports publish it
// unchanged, so it never changes once released.
type ErrorCode string

// The codes a run can end with.
const (
	CodePipelineError   ErrorCode = "pipeline_error"
	CodeConfigError     ErrorCode = "config_error"
	CodeVaultKeyMissing ErrorCode = "vault_key_missing"
	CodeVaultTampered   ErrorCode = "vault_tampered"
	CodeTimeout         ErrorCode = "timeout"
	CodePoisoned        ErrorCode = "poisoned"
	CodePoolUnavailable ErrorCode = "pool_unavailable"
	CodeLeaseLost       ErrorCode = "lease_lost"
	CodeShardFailed     ErrorCode = "shard_failed"
	CodeShardKeyInvalid ErrorCode = "shard_key_invalid"
	// The confinement refusals of a served config's connectors (SPEC §14.1), found when
	// a connector opens its target; the same codes answer a submit with 422.
	CodePathRefused    ErrorCode = "path_refused"
	CodeHostRefused    ErrorCode = "host_refused"
	CodeHistoryRefused ErrorCode = "history_refused"
)

var codes = []ErrorCode{
	CodePipelineError, CodeConfigError, CodeVaultKeyMissing, CodeVaultTampered, CodeTimeout,
	CodePoisoned, CodePoolUnavailable, CodeLeaseLost, CodeShardFailed, CodeShardKeyInvalid,
	CodePathRefused, CodeHostRefused, CodeHistoryRefused,
}

// Codes returns every run error code, so a transport can check that it maps them all.
func Codes() []ErrorCode { return slices.Clone(codes) }

// Valid reports whether c is one of the run error codes.
func (c ErrorCode) Valid() bool { return slices.Contains(codes, c) }

// Error is why a run ended without success: a stable code and a message for people.
// Messages never hold secrets or URL credentials.
type Error struct {
	Code    ErrorCode
	Message string
}

// Error makes *Error usable as an error value, so application code can return one and a
// caller can recover it with errors.As.
func (e *Error) Error() string {
	if e.Message == "" {
		return string(e.Code)
	}
	return string(e.Code) + ": " + e.Message
}
