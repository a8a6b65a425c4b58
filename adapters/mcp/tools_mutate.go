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
	RunID    string `json:"run_id" jsonschema:"follow it with get_run"`
	Status   string `json:"status"`
	Replayed bool   `json:"replayed" jsonschema:"true when an existing run answered (same idempotency_key or run_key)"`
}

type runTemplateArgs struct {
	TemplateID     string            `json:"template_id" jsonschema:"the template id (see list_templates)"`
	Params         map[string]string `json:"params,omitempty" jsonschema:"values of the template's params, by name (see get_template)"`
	Pool           string            `json:"pool,omitempty" jsonschema:"the pool, when the template allows overriding it"`
	Labels         map[string]string `json:"labels,omitempty"`
	IdempotencyKey string            `json:"idempotency_key,omitempty"`
	RunKey         string            `json:"run_key,omitempty"`
}

type cancelAnswer struct {
	Run runView `json:"run"`
	// Immediate mirrors the REST 200/202 distinction.
	Immediate bool `json:"immediate" jsonschema:"true when the run ended at once (or had already ended); false when a running run was signalled and will stop shortly: poll get_run"`
}

func (t tools) addMutatingTools(srv *sdk.Server) {
	sdk.AddTool(srv, &sdk.Tool{Name: "run_pipeline",
		Description: "Start a pipeline run from a config. Returns its run_id at once; poll get_run until terminal."}, t.runPipeline)
	if t.s.deps.Templates != nil {
		sdk.AddTool(srv, &sdk.Tool{Name: "run_template",
			Description: "Start a run of a registered template's newest version with params."}, t.runTemplate)
	}
	destructive := true
	sdk.AddTool(srv, &sdk.Tool{Name: "cancel_run", Annotations: &sdk.ToolAnnotations{DestructiveHint: &destructive},
		Description: "Cancel a queued, pending or running run. A running run stops at its next page boundary."}, t.cancelRun)
}

// runPipeline goes through the one submit funnel, like POST /v1/runs.
func (t tools) runPipeline(ctx context.Context, _ *sdk.CallToolRequest, in runPipelineArgs) (*sdk.CallToolResult, submitAnswer, error) {
	res, err := t.s.deps.Runs.Submit(ctx, runs.SubmitRequest{
		Principal: t.p, TriggerKind: string(run.TriggerMCP), Config: []byte(in.Config), Name: in.Name,
		Labels: in.Labels, Pool: in.Pool, Params: in.Params, IdempotencyKey: in.IdempotencyKey,
		RunKey: in.RunKey, TimeoutSecs: in.TimeoutSecs,
	})
	if err != nil {
		return nil, submitAnswer{}, t.s.fail(ctx, "run_pipeline", err)
	}
	return nil, submitAnswer{RunID: res.RunID, Status: res.Status, Replayed: res.Replayed}, nil
}

func (t tools) runTemplate(ctx context.Context, _ *sdk.CallToolRequest, in runTemplateArgs) (*sdk.CallToolResult, submitAnswer, error) {
	res, err := t.s.deps.Templates.Run(ctx, t.p, in.TemplateID, templates.RunRequest{
		Params: in.Params, Pool: in.Pool, Labels: in.Labels, IdempotencyKey: in.IdempotencyKey,
		RunKey: in.RunKey, TriggerKind: run.TriggerMCP,
	})
	if err != nil {
		return nil, submitAnswer{}, t.s.fail(ctx, "run_template", err)
	}
	return nil, submitAnswer{RunID: res.RunID, Status: res.Status, Replayed: res.Replayed}, nil
}

func (t tools) cancelRun(ctx context.Context, _ *sdk.CallToolRequest, in runIDArgs) (*sdk.CallToolResult, cancelAnswer, error) {
	rec, immediate, err := t.s.deps.Runs.Cancel(ctx, t.p, in.RunID)
	if err != nil {
		return nil, cancelAnswer{}, t.s.fail(ctx, "cancel_run", err)
	}
	return nil, cancelAnswer{Run: toRunView(rec, t.s.redact), Immediate: immediate}, nil
}
