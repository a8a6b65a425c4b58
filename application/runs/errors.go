package runs

import (
	"errors"
	"slices"
)

// The refusals of the run use-cases. Each is a sentinel that the transports map to one
// status and stable code (SPEC §2.9); the comment names that mapping. Errors from other
// packages pass through Submit unchanged and are mapped there: *pool.UnservedError
// (pool_unserved 422), pipeline.Errors / *pipeline.SyntaxError (invalid_config 422),
// *execute.DirectiveRefusedError (directive_refused 422), run.ErrNotFound (not_found 404).
var (
	// ErrDraining: the server is shutting down and takes no submissions (draining, 503).
	ErrDraining = errors.New("the server is draining and accepts no new runs: submit to another member or retry after it restarts")
	// ErrQueueFull: pending + queued runs reached --max-queued-runs (queue_full, 429).
	ErrQueueFull = errors.New("the run queue is full (--max-queued-runs): retry later")
	// ErrIdempotencyConflict: the idempotency key was used for a different request
	// (idempotency_conflict, 409).
	ErrIdempotencyConflict = errors.New("idempotency_key was already used for a different request: use a new key or resend the original request")
	// ErrRunDeleted: the idempotency key's run was deleted (run_deleted, 410).
	ErrRunDeleted = errors.New("the run of this idempotency_key was deleted: use a new key to run again")
	// ErrRunNotTerminal: the run is still queued, pending, running or sharded
	// (run_not_terminal, 409).
	ErrRunNotTerminal = errors.New("the run is not terminal: cancel it and wait for it to end first")
	// ErrForbidden: the principal's role or tenant does not allow the call (forbidden, 403).
	ErrForbidden = errors.New("forbidden")
	// ErrInvalidRequest: a request field is malformed (invalid_body, 400). Returned
	// wrapped in an *InvalidRequestError that names the field.
	ErrInvalidRequest = errors.New("invalid request")
	// ErrCallbackRefused: the callback settings are refused (invalid_config, 422, with
	// details.errors[0].path = the error's Path). Returned wrapped in a
	// *CallbackRefusedError.
	ErrCallbackRefused = errors.New("callback refused")
	// ErrStateFormatRefused: the source needs a state format a live member cannot read
	// (state_format_refused, 422). Returned wrapped in a *StateFormatRefusedError that
	// names the members.
	ErrStateFormatRefused = errors.New("state format refused")
	// ErrPoolsUnsupported: a pool other than default was asked for while a live member
	// without pool support could claim the run (pool_unserved, 422). Returned wrapped in a
	// *PoolsUnsupportedError that names the members.
	ErrPoolsUnsupported = errors.New("pools unsupported by a live member")
	// ErrSecretParamsRefused: a request with secret params needs approval
	// (secret_params_refused, 422, SPEC §7.4). A change request waits days for a
	// decision; a secret kept that long outside the run that needs it is refused instead:
	// put the secret in the server's environment (${secret:NAME}) or run without
	// --require-approval.
	ErrSecretParamsRefused = errors.New("secret params cannot wait for approval (--require-approval run): " +
		"reference the secret with ${secret:NAME} or ${env:NAME} in the template instead of passing it as a param")
)

// Errors lists every exported sentinel of this package, so a transport's error table
// test can check that each one is mapped.
func Errors() []error {
	return slices.Clone([]error{
		ErrDraining, ErrQueueFull, ErrQueryTimeout, ErrIdempotencyConflict, ErrRunDeleted,
		ErrRunNotTerminal, ErrForbidden, ErrInvalidRequest, ErrCallbackRefused,
		ErrStateFormatRefused, ErrPoolsUnsupported, ErrVaultKeyRequired, ErrSecretParamsRefused,
	})
}

// InvalidRequestError is a malformed request field. errors.Is(err, ErrInvalidRequest).
type InvalidRequestError struct {
	Field   string // the request field to change, e.g. "limit", "labels.Env"
	Message string
}

func (e *InvalidRequestError) Error() string {
	if e.Field == "" {
		return "invalid request: " + e.Message
	}
	return "invalid request: " + e.Field + ": " + e.Message
}

// Unwrap makes errors.Is(err, ErrInvalidRequest) true.
func (e *InvalidRequestError) Unwrap() error { return ErrInvalidRequest }

func invalid(field, msg string) error { return &InvalidRequestError{Field: field, Message: msg} }

// CallbackRefusedError is refused callback settings: Path is the request path to change
// (callback.url, callback.on[1], callback.extra_fields.run_id). The message never quotes
// the URL, which may carry credentials. errors.Is(err, ErrCallbackRefused), and for an
// address refusal also errors.Is(err, callback.ErrRefused).
type CallbackRefusedError struct {
	Path    string
	Message string
	Err     error // the policy's refusal, when there is one
}

func (e *CallbackRefusedError) Error() string { return e.Path + ": " + e.Message }

// Unwrap exposes both the package sentinel and the policy's refusal.
func (e *CallbackRefusedError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrCallbackRefused}
	}
	return []error{ErrCallbackRefused, e.Err}
}
