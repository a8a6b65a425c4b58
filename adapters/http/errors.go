package http

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/callback"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/pool"
	"github.com/sluicehq/sluice/domain/reach"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/schedule"
	"github.com/sluicehq/sluice/domain/secret"
	"github.com/sluicehq/sluice/domain/shard"
	"github.com/sluicehq/sluice/domain/state"
)

// The stable request error codes (SPEC §2.9). Clients branch on these, so they never change
// once released; codeConflict is this adapter's addition for races the SPEC list does not
// name, and codeInternal answers what no row of the table matches.
const (
	codeInvalidBody         = "invalid_body"
	codeUnauthorized        = "unauthorized"
	codeForbidden           = "forbidden"
	codeNotFound            = "not_found"
	codeMethodNotAllowed    = "method_not_allowed"
	codeIdempotencyConflict = "idempotency_conflict"
	codeRunNotTerminal      = "run_not_terminal"
	codeTemplateInUse       = "template_in_use"
	codeConflict            = "conflict"
	codeRunDeleted          = "run_deleted"
	codeBodyTooLarge        = "body_too_large"
	codeRequestTimeout      = "request_timeout"
	codeQueryTimeout        = "query_timeout"
	codeInvalidConfig       = "invalid_config"
	codeInvalidParams       = "invalid_params"
	codeDirectiveRefused    = "directive_refused"
	codePoolUnserved        = "pool_unserved"
	codePoolOverrideDenied  = "pool_override_denied"
	codeVaultKeyRequired    = "vault_key_required"
	codeSecretParamsRefused = "secret_params_refused"
	codeSecretMisplaced     = "secret_param_misplaced"
	codeShardRefused        = "shard_refused"
	codeStateFormatRefused  = "state_format_refused"
	codePathRefused         = reach.CodePathRefused
	codeHostRefused         = reach.CodeHostRefused
	codeHistoryRefused      = reach.CodeHistoryRefused
	codeQueueFull           = "queue_full"
	codeDraining            = "draining"
	codeHistoryUnavailable  = "history_unavailable"
	codeInternal            = "internal"
	// Run error codes a request meets itself when it opens a sealed config (GET …/config,
	// rollback, approving a change request): SPEC §7.4 and §7.6 say the same codes answer.
	codeVaultKeyMissing = string(run.CodeVaultKeyMissing)
	codeVaultTampered   = string(run.CodeVaultTampered)
)

// Codes returns every request error code with its HTTP status. The OpenAPI document lists
// them, and the code table is the one place a status is chosen.
func Codes() map[string]int {
	return map[string]int{
		codeInvalidBody:         http.StatusBadRequest,
		codeUnauthorized:        http.StatusUnauthorized,
		codeForbidden:           http.StatusForbidden,
		codeNotFound:            http.StatusNotFound,
		codeMethodNotAllowed:    http.StatusMethodNotAllowed,
		codeIdempotencyConflict: http.StatusConflict,
		codeRunNotTerminal:      http.StatusConflict,
		codeTemplateInUse:       http.StatusConflict,
		codeConflict:            http.StatusConflict,
		codeRunDeleted:          http.StatusGone,
		codeBodyTooLarge:        http.StatusRequestEntityTooLarge,
		codeRequestTimeout:      http.StatusRequestTimeout,
		codeQueryTimeout:        http.StatusServiceUnavailable,
		codeInvalidConfig:       http.StatusUnprocessableEntity,
		codeInvalidParams:       http.StatusUnprocessableEntity,
		codeDirectiveRefused:    http.StatusUnprocessableEntity,
		codePoolUnserved:        http.StatusUnprocessableEntity,
		codePoolOverrideDenied:  http.StatusUnprocessableEntity,
		codeVaultKeyRequired:    http.StatusUnprocessableEntity,
		codeSecretParamsRefused: http.StatusUnprocessableEntity,
		codeSecretMisplaced:     http.StatusUnprocessableEntity,
		codeShardRefused:        http.StatusUnprocessableEntity,
		codeStateFormatRefused:  http.StatusUnprocessableEntity,
		codePathRefused:         http.StatusUnprocessableEntity,
		codeHostRefused:         http.StatusUnprocessableEntity,
		codeHistoryRefused:      http.StatusUnprocessableEntity,
		codeQueueFull:           http.StatusTooManyRequests,
		codeDraining:            http.StatusServiceUnavailable,
		codeHistoryUnavailable:  http.StatusServiceUnavailable,
		codeInternal:            http.StatusInternalServerError,
		// This server was not started with the key the data was sealed under: one that was
		// can answer, so it is a server-side unavailability, not a bad request.
		codeVaultKeyMissing: http.StatusServiceUnavailable,
		// The stored ciphertext failed authentication: nothing the caller can change.
		codeVaultTampered: http.StatusInternalServerError,
	}
}

// RunCodes says how each run error code (run.Codes, SPEC §2.9) reaches a REST client: the
// status of a request that meets the failure itself (a refused path at submit, a sealed
// config this server cannot open), or 200 for codes that only ever appear as the error
// of a run resource. A test fails when a domain code is missing here or its status
// disagrees with Codes, so a new failure cannot ship unpublished.
func RunCodes() map[run.ErrorCode]int {
	status := Codes()
	inResource := http.StatusOK
	return map[run.ErrorCode]int{
		run.CodePipelineError:   inResource,
		run.CodeConfigError:     inResource,
		run.CodeVaultKeyMissing: status[codeVaultKeyMissing],
		run.CodeVaultTampered:   status[codeVaultTampered],
		run.CodeTimeout:         inResource,
		run.CodePoisoned:        inResource,
		run.CodePoolUnavailable: inResource,
		run.CodeLeaseLost:       inResource,
		run.CodeShardFailed:     inResource,
		run.CodeShardKeyInvalid: inResource,
		run.CodePathRefused:     status[codePathRefused],
		run.CodeHostRefused:     status[codeHostRefused],
		run.CodeHistoryRefused:  status[codeHistoryRefused],
	}
}

// mapping sends every error that errors.Is target to code.
type mapping struct {
	target error
	code   string
}

// errorTable is THE table from application and domain errors to request codes. Order
// matters: the first match wins, so narrower errors come before the ones they may wrap.
// A test fails when an exported sentinel of runs, run, pool, execute or pipeline is
// missing here.
func errorTable() []mapping {
	return []mapping{
		{runs.ErrInvalidRequest, codeInvalidBody},
		{runs.ErrForbidden, codeForbidden},
		{run.ErrNotFound, codeNotFound},
		{runs.ErrIdempotencyConflict, codeIdempotencyConflict},
		{runs.ErrRunNotTerminal, codeRunNotTerminal},
		{runs.ErrRunDeleted, codeRunDeleted},
		{execute.ErrDirectiveRefused, codeDirectiveRefused},
		// Confinement (SPEC §14.1): the history first, as a history file is also a path.
		{reach.ErrHistoryRefused, codeHistoryRefused},
		{reach.ErrPathRefused, codePathRefused},
		{reach.ErrHostRefused, codeHostRefused},
		{pipeline.ErrShardRefused, codeShardRefused},
		{pipeline.ErrSecretParamMisplaced, codeSecretMisplaced},
		// A supplied param value the declaration refuses (SPEC §14.2); such errors are
		// config errors too, so this row comes first.
		{pipeline.ErrInvalidParams, codeInvalidParams},
		{pipeline.ErrInvalidConfig, codeInvalidConfig},
		{pool.ErrUnserved, codePoolUnserved},
		// A live member of an older release would claim the run without honouring its pool.
		{runs.ErrPoolsUnsupported, codePoolUnserved},
		{runs.ErrStateFormatRefused, codeStateFormatRefused},
		{pool.ErrOverrideDenied, codePoolOverrideDenied},
		{state.ErrFormat, codeStateFormatRefused},
		// Refused callback settings are part of what the request configures, reported like
		// a config error with the request path to change.
		{runs.ErrCallbackRefused, codeInvalidConfig},
		{callback.ErrRefused, codeInvalidConfig},
		// Values of the submitted config the domain refuses while sealing or planning.
		{shard.ErrInvalidCount, codeInvalidConfig},
		{secret.ErrTokenInText, codeInvalidConfig},
		{secret.ErrUnknownToken, codeInvalidConfig},
		{secret.ErrTooShort, codeInvalidConfig},
		{runs.ErrVaultKeyRequired, codeVaultKeyRequired},
		{runs.ErrVaultKeyMissing, codeVaultKeyMissing},
		{runs.ErrVaultTampered, codeVaultTampered},
		{runs.ErrSecretParamsRefused, codeSecretParamsRefused},
		{templates.ErrInUse, codeTemplateInUse},
		// Schedule settings the domain refuses (the use-cases name the field).
		{schedule.ErrInvalidCron, codeInvalidBody},
		{schedule.ErrInvalidSchedule, codeInvalidBody},
		{runs.ErrQueueFull, codeQueueFull},
		{runs.ErrDraining, codeDraining},
		// A race lost against another writer: the request was valid, the state moved on.
		{run.ErrConflict, codeConflict},
		{run.ErrInvalidTransition, codeConflict},
		{run.ErrLeaseLost, codeConflict},
		// A read ran past --query-timeout-secs; before ErrUnavailable, which it wraps.
		{runs.ErrQueryTimeout, codeQueryTimeout},
		// The history did not answer: nothing was decided, the caller may retry.
		{run.ErrUnavailable, codeHistoryUnavailable},
	}
}

// apiError is an answer decided by this adapter (a bad body, a missing token) or the
// translation of an application error.
type apiError struct {
	status  int
	code    string
	message string
	details map[string]any
}

func (e *apiError) Error() string { return e.code + ": " + e.message }

func apiErrorf(status int, code, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, message: fmt.Sprintf(format, args...)}
}

func invalidBody(format string, args ...any) *apiError {
	return apiErrorf(http.StatusBadRequest, codeInvalidBody, format, args...)
}

func tooLarge(limit int64) *apiError {
	return apiErrorf(http.StatusRequestEntityTooLarge, codeBodyTooLarge,
		"request body is larger than %d bytes (the server's --body-limit-bytes)", limit)
}

// internalError is what an unknown error becomes: the message is generic on purpose, the
// real error goes to the log only.
func internalError() *apiError {
	return &apiError{status: http.StatusInternalServerError, code: codeInternal,
		message: "internal error; the server log has the details"}
}

// Classify answers err as the REST API would: its §2.9 code, its redacted message and
// its machine-readable details. Other transports (MCP) call it so an error reads the same
// wherever it is met; known is false for an error no row of the table matches (code
// "internal" with a generic message: the caller logs the real error).
func Classify(err error) (code, message string, details map[string]any, known bool) {
	ae, known := classify(err)
	return ae.code, ae.message, ae.details, known
}

// classify finds the answer for err.
func classify(err error) (*apiError, bool) {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae, true
	}
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return tooLarge(mbe.Limit), true
	}
	status := Codes()
	for _, m := range errorTable() {
		if errors.Is(err, m.target) {
			out := &apiError{status: status[m.code], code: m.code, message: redact(err.Error())}
			out.details = details(err)
			return out, true
		}
	}
	return internalError(), false
}

// details carries the machine-readable parts of the errors that have them.
func details(err error) map[string]any {
	var fe pipeline.Errors
	if errors.As(err, &fe) {
		list := make([]map[string]any, 0, len(fe))
		for _, e := range fe {
			d := fieldError(e.Path, e.Message, e.Pos)
			if e.Param != "" {
				d["param"] = e.Param
			}
			list = append(list, d)
		}
		return map[string]any{"errors": list}
	}
	var se *pipeline.SyntaxError
	if errors.As(err, &se) {
		return map[string]any{"errors": []map[string]any{fieldError("", se.Message, se.Pos)}}
	}
	var ce *runs.CallbackRefusedError
	if errors.As(err, &ce) {
		return map[string]any{"errors": []map[string]any{{"path": ce.Path, "message": redact(ce.Message)}}}
	}
	var ie *runs.InvalidRequestError
	if errors.As(err, &ie) && ie.Field != "" {
		return map[string]any{"field": ie.Field}
	}
	var ue *pool.UnservedError
	if errors.As(err, &ue) {
		return map[string]any{"pool": ue.Pool, "served": nonNil(ue.Served)}
	}
	var sfe *runs.StateFormatRefusedError
	if errors.As(err, &sfe) {
		return map[string]any{"state_format": sfe.Need, "members": memberDetails(sfe.Members)}
	}
	var pue *runs.PoolsUnsupportedError
	if errors.As(err, &pue) {
		return map[string]any{"pool": pue.Pool, "members": memberDetails(pue.Members)}
	}
	var oe *pool.OverrideDeniedError
	if errors.As(err, &oe) {
		return map[string]any{"pool": oe.Requested, "template_pool": oe.Template, "allowed": nonNil(oe.Allowed)}
	}
	var sme *pipeline.SecretMisplacedError
	if errors.As(err, &sme) {
		return map[string]any{"errors": []map[string]any{{"path": sme.Path,
			"message": "secret param " + sme.Param + " may not be used here"}}, "param": sme.Param}
	}
	var re *reach.RefusedError
	if errors.As(err, &re) {
		return map[string]any{"errors": []map[string]any{{"path": re.Key, "message": redact(re.Error())}}}
	}
	var de *execute.DirectiveRefusedError
	if errors.As(err, &de) {
		d := fieldError(de.Path, de.Reason, de.Pos)
		d["directive"] = redact(de.Directive)
		return d
	}
	return nil
}

// memberDetails names the members a refusal is about.
func memberDetails(ms []runs.MemberRef) []map[string]any {
	out := make([]map[string]any, len(ms))
	for i, m := range ms {
		out[i] = map[string]any{"instance_id": m.InstanceID, "host": m.Host, "listen": m.Listen,
			"version": m.Version, "state_format_max": m.StateFormatMax}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func fieldError(path, msg string, pos pipeline.Pos) map[string]any {
	m := map[string]any{"path": path, "message": redact(msg)}
	if pos.Line > 0 {
		m["line"] = pos.Line
		m["column"] = pos.Column
	}
	return m
}

// errorBody is the one error shape every route answers with.
type errorBody struct {
	Error errorPayload `json:"error"`
}

type errorPayload struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
	// RequestID finds the request's lines in the server log (X-Request-Id).
	RequestID string `json:"request_id,omitempty"`
}

// fail answers err and stops the chain. Unknown errors are logged (redacted) and answered
// with a generic 500.
func (s *server) fail(c *gin.Context, err error) {
	ae, known := classify(err)
	if !known {
		s.log.ErrorContext(c.Request.Context(), "request failed",
			"method", c.Request.Method, "route", c.FullPath(), "error", redact(err.Error()))
	}
	if ae.code == codeRequestTimeout {
		c.Header("Connection", "close") // the rest of the body is not waited for
	}
	if ae.code == codeQueueFull {
		c.Header("Retry-After", strconv.Itoa(retryAfterSecs(s.cfg.PollInterval)))
	}
	writeError(c, ae)
}

func writeError(c *gin.Context, ae *apiError) {
	c.AbortWithStatusJSON(ae.status, errorBody{Error: errorPayload{Code: ae.code, Message: ae.message, Details: ae.details,
		RequestID: RequestIDFrom(c.Request.Context())}})
}
