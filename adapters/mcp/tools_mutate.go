package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/run"
)

type runPipelineArgs struct {
	Config         string            `json:"config" jsonschema:"the pipeline config as YAML or JSON text (check it first with validate_config)"`
	Name           string            `json:"name,omitempty" jsonschema:"overrides the config's name"`
	Labels         map[string]string `json:"labels,omitempty" jsonschema:"labels to find the run by later"`
	Pool           string            `json:"pool,omitempty" jsonschema:"the execution pool (default: the config's, then default)"`
	Params         map[string]string `json:"params,omitempty" jsonschema:"values of the config's params, by name"`
	IdempotencyKey string            `json:"idempotency_key,omitempty" jsonschema:"retrying with the same key answers the same run instead of starting another"`
	RunKey         string            `json:"run_key,omitempty" jsonschema:"a unique key per pipeline: a second run with the same key answers the existing run"`
	TimeoutSecs    int               `json:"timeout_secs,omitempty" jsonschema:"fail the run after this many seconds"`
}

type submitAnswer struct {
	RunID    string `json:"run_id,omitempty" jsonschema:"follow it with get_run; absent when a change request was made instead"`
	Status   string `json:"status" jsonschema:"the run's status, or proposed for a change request"`
	Replayed bool   `json:"replayed" jsonschema:"true when an existing run answered (same idempotency_key or run_key)"`
	// ChangeRequestID is set when the server requires approval (or propose_run asked):
	// nothing runs until another operator approves it.
	ChangeRequestID string `json:"change_request_id,omitempty" jsonschema:"the change request a person must approve before the run exists"`
}

func answer(res runs.SubmitResult) submitAnswer {
	return submitAnswer{RunID: res.RunID, Status: res.Status, Replayed: res.Replayed, ChangeRequestID: res.ChangeRequestID}
}

type runTemplateArgs struct {
	TemplateID     string            `json:"template_id" jsonschema:"the template id (see list_templates)"`
	Params         map[string]string `json:"params,omitempty" jsonschema:"values of the template's params, by name (see get_template)"`
	Pool           string            `json:"pool,omitempty" jsonschema:"the pool, when the template allows overriding it"`
	Labels         map[string]string `json:"labels,omitempty" jsonschema:"labels to find the run by later"`
	IdempotencyKey string            `json:"idempotency_key,omitempty" jsonschema:"retrying with the same key answers the same run instead of starting another"`
	RunKey         string            `json:"run_key,omitempty" jsonschema:"a unique key per pipeline: a second run with the same key answers the existing run"`
}

type cancelAnswer struct {
	Run runView `json:"run" jsonschema:"the run, in the shape of GET /v1/runs/{id}"`
	// Immediate mirrors the REST 200/202 distinction.
	Immediate bool `json:"immediate" jsonschema:"true when the run ended at once (or had already ended); false when a running run was signalled and will stop shortly: poll get_run"`
}

// addProposeTool offers propose_run to operators and admins, with or without
// --mcp-allow-mutations.
func (t tools) addProposeTool(srv *sdk.Server) {
	addTool(srv, &sdk.Tool{Name: "propose_run", Annotations: writes(false, false, false),
		Description: "Propose a pipeline run as a change request; it runs only after another operator approves it " +
			"(POST /v1/change-requests/{id}/approve); follow it with get_change_request."}, t.proposePipeline)
}

func (t tools) addMutatingTools(srv *sdk.Server) {
	// A run writes to its sink (possibly overwriting) and reaches the systems its
	// connectors name; with the same idempotency_key a retry answers the same run.
	addTool(srv, &sdk.Tool{Name: "run_pipeline", Annotations: writes(true, false, true),
		Description: "Start a pipeline run from a config. Returns its run_id at once; poll get_run until terminal."}, t.runPipeline)
	if t.s.deps.Templates != nil {
		addTool(srv, &sdk.Tool{Name: "run_template", Annotations: writes(true, false, true),
			Description: "Start a run of a registered template's newest version with params."}, t.runTemplate)
	}
	addTool(srv, &sdk.Tool{Name: "cancel_run", Annotations: writes(true, true, false),
		Description: "Cancel a queued, pending or running run. A running run stops at its next page boundary."}, t.cancelRun)
}

// runPipeline goes through the one submit funnel, like POST /v1/runs.
func (t tools) runPipeline(ctx context.Context, _ *sdk.CallToolRequest, in runPipelineArgs) (*sdk.CallToolResult, submitAnswer, error) {
	return t.submit(ctx, "run_pipeline", in, false)
}

// proposePipeline always makes a change request (SPEC §11): it needs only the operator
// role, because nothing runs until a person approves.
func (t tools) proposePipeline(ctx context.Context, _ *sdk.CallToolRequest, in runPipelineArgs) (*sdk.CallToolResult, submitAnswer, error) {
	return t.submit(ctx, "propose_run", in, true)
}

func (t tools) submit(ctx context.Context, tool string, in runPipelineArgs, propose bool) (*sdk.CallToolResult, submitAnswer, error) {
	res, err := t.s.deps.Runs.Submit(ctx, runs.SubmitRequest{
		Principal: t.p, TriggerKind: string(run.TriggerMCP), Config: []byte(in.Config), Name: in.Name,
		Labels: in.Labels, Pool: in.Pool, Params: in.Params, IdempotencyKey: in.IdempotencyKey,
		RunKey: in.RunKey, TimeoutSecs: in.TimeoutSecs, Propose: propose,
	})
	if err != nil {
		return nil, submitAnswer{}, t.s.fail(ctx, tool, err)
	}
	return nil, answer(res), nil
}

func (t tools) runTemplate(ctx context.Context, _ *sdk.CallToolRequest, in runTemplateArgs) (*sdk.CallToolResult, submitAnswer, error) {
	res, err := t.s.deps.Templates.Run(ctx, t.p, in.TemplateID, templates.RunRequest{
		Params: in.Params, Pool: in.Pool, Labels: in.Labels, IdempotencyKey: in.IdempotencyKey,
		RunKey: in.RunKey, TriggerKind: run.TriggerMCP,
	})
	if err != nil {
		return nil, submitAnswer{}, t.s.fail(ctx, "run_template", err)
	}
	return nil, answer(res), nil
}

func (t tools) cancelRun(ctx context.Context, _ *sdk.CallToolRequest, in runIDArgs) (*sdk.CallToolResult, cancelAnswer, error) {
	rec, immediate, err := t.s.deps.Runs.Cancel(ctx, t.p, in.RunID)
	if err != nil {
		return nil, cancelAnswer{}, t.s.fail(ctx, "cancel_run", err)
	}
	return nil, cancelAnswer{Run: toRunView(rec, t.s.redact), Immediate: immediate}, nil
}
