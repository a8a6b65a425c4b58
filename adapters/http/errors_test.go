package http_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/application/approvals"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
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

// sentinels are every exported error an application call can return through the handlers.
func sentinels() []error {
	out := append([]error{}, runs.Errors()...)
	out = append(out, approvals.Errors()...)
	// Every exported sentinel of domain/ and application/ that a request can meet.
	// cluster.ErrUndeliverable is left out: it only concerns callback delivery.
	out = append(out, run.ErrNotFound, run.ErrConflict, run.ErrLeaseLost, run.ErrInvalidTransition, run.ErrUnavailable,
		pipeline.ErrInvalidConfig, pipeline.ErrInvalidParams, pipeline.ErrShardRefused, pipeline.ErrSecretParamMisplaced, execute.ErrDirectiveRefused, pool.ErrUnserved, pool.ErrOverrideDenied,
		callback.ErrRefused, shard.ErrInvalidCount, state.ErrFormat,
		secret.ErrTooShort, secret.ErrTokenInText, secret.ErrUnknownToken,
		schedule.ErrInvalidCron, schedule.ErrInvalidSchedule,
		reach.ErrPathRefused, reach.ErrHostRefused, reach.ErrHistoryRefused)
	return out
}

func TestEverySentinelIsMapped(t *testing.T) {
	t.Parallel()
	codes := sluicehttp.Codes()
	for _, target := range sentinels() {
		t.Run(target.Error(), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.runs.get = func(runs.Principal, string) (*runs.Record, error) {
				return nil, fmt.Errorf("looking up: %w", target)
			}
			rec := e.do(t, http.MethodGet, "/v1/runs/r-1", adminToken, nil)
			code, _, _ := errorOf(t, rec)
			require.NotEqual(t, "internal", code, "%v is not in the error table", target)
			status, ok := codes[code]
			require.True(t, ok, "code %q has no status", code)
			require.Equal(t, status, rec.Code)
		})
	}
}

func TestErrorTable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		err    error
		status int
		code   string
	}{
		{&runs.InvalidRequestError{Field: "limit", Message: "too big"}, 400, "invalid_body"},
		{fmt.Errorf("%w: viewer", runs.ErrForbidden), 403, "forbidden"},
		{fmt.Errorf("run x: %w", run.ErrNotFound), 404, "not_found"},
		{runs.ErrIdempotencyConflict, 409, "idempotency_conflict"},
		{runs.ErrRunNotTerminal, 409, "run_not_terminal"},
		{runs.ErrRunDeleted, 410, "run_deleted"},
		{pipeline.Errors{{Path: "pipeline.name", Message: "required"}}, 422, "invalid_config"},
		{pipeline.Errors{{Path: "pipeline.name", Message: "required"}, {Path: "params.day", Message: "must be a date", Param: "day"}}, 422, "invalid_params"},
		{&pipeline.SyntaxError{Message: "bad"}, 422, "invalid_config"},
		{&execute.DirectiveRefusedError{Path: "a.b", Directive: "${env:X}", Reason: "no"}, 422, "directive_refused"},
		{&runs.CallbackRefusedError{Path: "callback.url", Message: "metadata host"}, 422, "invalid_config"},
		{pool.Admit("gpu", []string{"default"}), 422, "pool_unserved"},
		{&runs.PoolsUnsupportedError{Pool: "gpu", Members: []runs.MemberRef{{InstanceID: "old-1"}}}, 422, "pool_unserved"},
		{&runs.StateFormatRefusedError{Need: 2, Reads: 1, Members: []runs.MemberRef{{InstanceID: "old-1", StateFormatMax: 1}}}, 422, "state_format_refused"},
		{pool.Override{Allowed: []string{"a"}}.Check("b", "t"), 422, "pool_override_denied"},
		{shard.ValidateCount(0), 422, "invalid_config"},
		{&pipeline.ShardRefusedError{Reasons: []string{"the file sink writes one file"}}, 422, "shard_refused"},
		{&pipeline.SecretMisplacedError{Param: "token", Path: "name"}, 422, "secret_param_misplaced"},
		{runs.ErrSecretParamsRefused, 422, "secret_params_refused"},
		{runs.ErrQueueFull, 429, "queue_full"},
		{runs.ErrDraining, 503, "draining"},
		{run.ErrConflict, 409, "conflict"},
		// Opening a sealed config answers with the run error codes of SPEC §7.4 and §7.6.
		{&runs.VaultKeyMissingError{KeyID: "k-old"}, 503, "vault_key_missing"},
		{fmt.Errorf("open config: %w", runs.ErrVaultTampered), 500, "vault_tampered"},
		{errors.New("disk on fire"), 500, "internal"},
	}
	for _, tc := range cases {
		t.Run(tc.code+"/"+tc.err.Error(), func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			e.runs.submit = func(runs.SubmitRequest) (runs.SubmitResult, error) { return runs.SubmitResult{}, tc.err }
			rec := e.do(t, http.MethodPost, "/v1/runs", adminToken, map[string]any{"config": "x: 1"})
			require.Equal(t, tc.status, rec.Code, rec.Body.String())
			code, _, _ := errorOf(t, rec)
			require.Equal(t, tc.code, code)
		})
	}
}

func TestCodesMatchTheSpecList(t *testing.T) {
	t.Parallel()
	want := map[string]int{
		"invalid_body": 400, "unauthorized": 401, "forbidden": 403, "not_found": 404,
		"idempotency_conflict": 409, "run_not_terminal": 409, "template_in_use": 409, "run_deleted": 410,
		"body_too_large": 413, "invalid_config": 422, "invalid_params": 422, "directive_refused": 422, "pool_unserved": 422,
		"pool_override_denied": 422, "vault_key_required": 422, "secret_params_refused": 422,
		"secret_param_misplaced": 422, // SPEC §14.1
		"shard_refused":          422, "state_format_refused": 422, "queue_full": 429, "draining": 503,
		"history_unavailable": 503,
		// SPEC §14.1: confinement refusals.
		"path_refused": 422, "host_refused": 422, "history_refused": 422,
		// SPEC §14.3.
		"request_timeout": 408, "query_timeout": 503,
	}
	got := sluicehttp.Codes()
	for code, status := range want {
		require.Equal(t, status, got[code], code)
	}
	// The additions beyond the SPEC's request list are deliberate and few: three of this
	// adapter's own and the two run codes a request meets when it opens a sealed config.
	require.Len(t, got, len(want)+5)
	require.Equal(t, 503, got["vault_key_missing"])
	require.Equal(t, 500, got["vault_tampered"])
	require.Equal(t, 405, got["method_not_allowed"])
	require.Equal(t, 409, got["conflict"])
	require.Equal(t, 500, got["internal"])
}

func TestUnknownErrorIsGenericAndLogged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runs.get = func(runs.Principal, string) (*runs.Record, error) {
		return nil, errors.New("dial postgres://app:hunter2@db:5432/x: refused")
	}
	rec := e.do(t, http.MethodGet, "/v1/runs/r-1", viewerToken, nil)
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	code, msg, _ := errorOf(t, rec)
	require.Equal(t, "internal", code)
	require.NotContains(t, msg, "postgres")
	require.Contains(t, e.log.String(), "dial postgres://REDACTED@db:5432/x")
	require.NotContains(t, e.log.String(), "hunter2")
}

func TestErrorMessagesAreRedacted(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runs.submit = func(runs.SubmitRequest) (runs.SubmitResult, error) {
		return runs.SubmitResult{}, pipeline.Errors{{Path: "pipeline.source.config.url",
			Pos: pipeline.Pos{Line: 4, Column: 7}, Message: "cannot parse mysql://root:s3cret@db/x (password=s3cret)"}}
	}
	rec := e.do(t, http.MethodPost, "/v1/runs", operatorToken, map[string]any{"config": "x: 1"})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	require.NotContains(t, rec.Body.String(), "s3cret")
	_, _, details := errorOf(t, rec)
	list := details["errors"].([]any)
	require.Len(t, list, 1)
	fe := list[0].(map[string]any)
	require.Equal(t, "pipeline.source.config.url", fe["path"])
	require.EqualValues(t, 4, fe["line"])
	require.EqualValues(t, 7, fe["column"])
	require.Contains(t, fe["message"], "mysql://REDACTED@db/x")
}

func TestInvalidConfigDetails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runs.submit = func(runs.SubmitRequest) (runs.SubmitResult, error) {
		return runs.SubmitResult{}, fmt.Errorf("submit: %w", &pipeline.SyntaxError{Pos: pipeline.Pos{Line: 2, Column: 3}, Message: "mapping values are not allowed"})
	}
	rec := e.do(t, http.MethodPost, "/v1/runs", operatorToken, map[string]any{"config": "a: b: c"})
	_, _, details := errorOf(t, rec)
	fe := details["errors"].([]any)[0].(map[string]any)
	require.Equal(t, map[string]any{"path": "", "message": "mapping values are not allowed", "line": 2.0, "column": 3.0}, fe)

	e.runs.submit = func(runs.SubmitRequest) (runs.SubmitResult, error) {
		return runs.SubmitResult{}, pipeline.Errors{{Path: "pipeline.name", Message: "required"}}
	}
	rec = e.do(t, http.MethodPost, "/v1/runs", operatorToken, map[string]any{"config": "a: 1"})
	_, _, details = errorOf(t, rec)
	fe = details["errors"].([]any)[0].(map[string]any)
	require.Equal(t, map[string]any{"path": "pipeline.name", "message": "required"}, fe, "no position, no line/column keys")

	e.runs.submit = func(runs.SubmitRequest) (runs.SubmitResult, error) {
		return runs.SubmitResult{}, &runs.CallbackRefusedError{Path: "callback.url", Message: "169.254.169.254 is a metadata address"}
	}
	rec = e.do(t, http.MethodPost, "/v1/runs", operatorToken, map[string]any{"config": "a: 1"})
	_, _, details = errorOf(t, rec)
	require.Equal(t, "callback.url", details["errors"].([]any)[0].(map[string]any)["path"])
}

func TestDirectiveRefusedDetails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runs.submit = func(runs.SubmitRequest) (runs.SubmitResult, error) {
		return runs.SubmitResult{}, &execute.DirectiveRefusedError{Path: "pipeline.sink.config.path",
			Pos: pipeline.Pos{Line: 9, Column: 11}, Directive: "${file:/etc/passwd}", Reason: "file directives are refused over the network"}
	}
	rec := e.do(t, http.MethodPost, "/v1/runs", operatorToken, map[string]any{"config": "a: 1"})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	code, _, details := errorOf(t, rec)
	require.Equal(t, "directive_refused", code)
	require.Equal(t, "pipeline.sink.config.path", details["path"])
	require.Equal(t, "${file:/etc/passwd}", details["directive"])
	require.EqualValues(t, 9, details["line"])
}

func TestPoolErrorDetails(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runs.submit = func(runs.SubmitRequest) (runs.SubmitResult, error) {
		return runs.SubmitResult{}, fmt.Errorf("admission: %w", pool.Admit("gpu", []string{"default", "cpu"}))
	}
	rec := e.do(t, http.MethodPost, "/v1/runs", operatorToken, map[string]any{"config": "a: 1"})
	_, msg, details := errorOf(t, rec)
	require.Contains(t, msg, `pool "gpu"`)
	require.Equal(t, map[string]any{"pool": "gpu", "served": []any{"cpu", "default"}}, details)
}

func TestQueueFullSetsRetryAfter(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		poll time.Duration
		want string
	}{{10 * time.Millisecond, "1"}, {2 * time.Second, "2"}, {2500 * time.Millisecond, "3"}} {
		e := newEnv(t, func(c *sluicehttp.Config, _ *sluicehttp.Deps) { c.PollInterval = tc.poll })
		e.runs.submit = func(runs.SubmitRequest) (runs.SubmitResult, error) {
			return runs.SubmitResult{}, fmt.Errorf("admission: %w", runs.ErrQueueFull)
		}
		rec := e.do(t, http.MethodPost, "/v1/runs", operatorToken, map[string]any{"config": "a: 1"})
		require.Equal(t, http.StatusTooManyRequests, rec.Code)
		require.Equal(t, tc.want, rec.Header().Get("Retry-After"))
	}
}

func TestInvalidRequestNamesTheField(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runs.list = func(runs.Principal, runs.Filter) (runs.Page, error) {
		return runs.Page{}, &runs.InvalidRequestError{Field: "cursor", Message: "is not a cursor this server returned"}
	}
	rec := e.do(t, http.MethodGet, "/v1/runs?cursor=zzz", viewerToken, nil)
	require.Equal(t, http.StatusBadRequest, rec.Code)
	code, msg, details := errorOf(t, rec)
	require.Equal(t, "invalid_body", code)
	require.Contains(t, msg, "cursor")
	require.Equal(t, "cursor", details["field"])
}

func TestPanicIsA500(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runs.get = func(runs.Principal, string) (*runs.Record, error) { panic("boom token=abc") }
	rec := e.do(t, http.MethodGet, "/v1/runs/r-1", viewerToken, nil)
	require.Equal(t, http.StatusInternalServerError, rec.Code)
	code, msg, _ := errorOf(t, rec)
	require.Equal(t, "internal", code)
	require.NotContains(t, msg, "boom")
	require.Contains(t, e.log.String(), "panicked")
}

// TestInvalidParamsNameTheParam: a refused param value answers invalid_params, and each
// error about a value names its param in details.
func TestInvalidParamsNameTheParam(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runs.submit = func(runs.SubmitRequest) (runs.SubmitResult, error) {
		return runs.SubmitResult{}, pipeline.Errors{{Path: "params.region", Message: "must be one of eu, us (enum)", Param: "region"}}
	}
	rec := e.do(t, http.MethodPost, "/v1/runs", adminToken, map[string]any{"config": "x: 1"})
	require.Equal(t, http.StatusUnprocessableEntity, rec.Code)
	code, msg, details := errorOf(t, rec)
	require.Equal(t, "invalid_params", code)
	require.Contains(t, msg, "params.region: must be one of eu, us (enum)")
	require.Equal(t, []any{map[string]any{"path": "params.region", "message": "must be one of eu, us (enum)", "param": "region"}},
		details["errors"])
}

// The redaction hides URL credentials, never the words of an instruction: each of these
// messages was shown with "key: REDACTED" or "token: REDACTED" in it.
func TestRedactKeepsInstructions(t *testing.T) {
	t.Parallel()
	for _, msg := range []string{
		"pipeline.sink.config.key: required when write_mode is upsert",
		"secret params need a vault key: start the server with --vault-key (SLUICE_VAULT_KEY; `sluice keygen` prints one)",
		"write_mode: overwrite would let each shard replace the rows the others wrote; use write_mode: upsert with key: [COLUMNS], or remove shard",
		"params.token: secret value too short: a secret param must be at least 8 characters long",
	} {
		require.Equal(t, msg, sluicehttp.Redact(msg))
	}
	require.Equal(t, "dial postgres://REDACTED@db/x?password=REDACTED&sslmode=disable",
		sluicehttp.Redact("dial postgres://app:pw@db/x?password=pw2&sslmode=disable"))
}

// TestEveryRunCodeIsPublished holds the HTTP adapter to the domain's list of run error
// codes: each has a row saying how it reaches a client, a code that is also a request
// answer has the same status in both tables, and the run resource's schema enum is the
// domain list.
func TestEveryRunCodeIsPublished(t *testing.T) {
	t.Parallel()
	published := sluicehttp.RunCodes()
	requests := sluicehttp.Codes()
	for _, c := range run.Codes() {
		status, ok := published[c]
		require.True(t, ok, "run error code %q is not in the HTTP adapter's RunCodes table", c)
		if want, isRequest := requests[string(c)]; isRequest {
			require.Equal(t, want, status, "run error code %q answers requests with another status", c)
		} else {
			require.Equal(t, http.StatusOK, status, "run error code %q only appears inside a run resource", c)
		}
	}
	require.Len(t, published, len(run.Codes()), "RunCodes lists a code the domain does not have")
}
