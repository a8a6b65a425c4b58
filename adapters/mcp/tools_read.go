package mcp

import (
	"context"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// tools are the tool handlers of one principal.
type tools struct {
	s *Server
	p runs.Principal
}

// List limits, the service's, so MCP and REST refuse the same values.
const (
	defaultListLimit = runs.DefaultListLimit
	maxListLimit     = runs.MaxListLimit
	defaultLogLimit  = 500
	maxLogLimit      = 5000
)

type runIDArgs struct {
	RunID string `json:"run_id" jsonschema:"the run id, as run_pipeline or list_runs returned it"`
}

type runAnswer struct {
	Run      runView `json:"run" jsonschema:"the run, in the shape of GET /v1/runs/{id}"`
	Terminal bool    `json:"terminal" jsonschema:"true once the status is final (completed, failed, cancelled): stop polling"`
}

type listRunsArgs struct {
	Status []runStatus       `json:"status,omitempty" jsonschema:"only runs in these statuses"`
	Name   string            `json:"name,omitempty" jsonschema:"only runs of this pipeline name"`
	Pool   string            `json:"pool,omitempty" jsonschema:"only runs of this pool"`
	RunKey string            `json:"run_key,omitempty" jsonschema:"only the run with this run key"`
	Labels map[string]string `json:"labels,omitempty" jsonschema:"only runs carrying all these labels"`
	Limit  int               `json:"limit,omitempty" jsonschema:"page size, 1 to 500 (default 50)"`
	Cursor string            `json:"cursor,omitempty" jsonschema:"next_cursor of the previous page"`
}

type listRunsAnswer struct {
	Runs       []runView `json:"runs" jsonschema:"newest first"`
	NextCursor string    `json:"next_cursor,omitempty" jsonschema:"pass as cursor for the next page; absent on the last page"`
}

type logsArgs struct {
	RunID string `json:"run_id" jsonschema:"the run id"`
	After int64  `json:"after,omitempty" jsonschema:"only lines after this sequence number (next of the previous answer)"`
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many lines, 1 to 5000 (default 500)"`
}

type logLine struct {
	Seq     int64          `json:"seq" jsonschema:"the line's sequence number"`
	At      string         `json:"at" jsonschema:"when it was logged"`
	Level   string         `json:"level" jsonschema:"INFO, WARN or ERROR"`
	Message string         `json:"message" jsonschema:"the message, secrets masked"`
	Attrs   map[string]any `json:"attrs,omitempty" jsonschema:"the line's attributes"`
}

type logsAnswer struct {
	Lines []logLine `json:"lines" jsonschema:"the lines, oldest first"`
	Next  int64     `json:"next" jsonschema:"pass as after to continue"`
	Done  bool      `json:"done" jsonschema:"true when the run is final and every line was returned"`
}

type validateArgs struct {
	Config string            `json:"config" jsonschema:"the pipeline config as YAML or JSON text"`
	Params map[string]string `json:"params,omitempty" jsonschema:"values of the config's params, by name"`
	Pool   string            `json:"pool,omitempty" jsonschema:"the pool it would run in (default: the config's, then default)"`
}

type fieldError struct {
	Path    string `json:"path" jsonschema:"where in the config, e.g. source.config.table"`
	Message string `json:"message" jsonschema:"what is wrong there"`
	Line    int    `json:"line,omitempty" jsonschema:"the line in the config text"`
	Column  int    `json:"column,omitempty" jsonschema:"the column in the config text"`
}

type validateAnswer struct {
	Valid    bool         `json:"valid" jsonschema:"true when a submission would be accepted"`
	Code     string       `json:"code,omitempty" jsonschema:"the REST error code when invalid (invalid_config, invalid_params, directive_refused, pool_unserved, ...)"`
	Message  string       `json:"message,omitempty" jsonschema:"the REST error message when invalid"`
	Errors   []fieldError `json:"errors" jsonschema:"every error with its path"`
	Warnings []string     `json:"warnings" jsonschema:"settings a run ignores"`
}

type noArgs struct{}

type templateArgs struct {
	TemplateID string `json:"template_id" jsonschema:"the template id"`
}

type templatesAnswer struct {
	Templates []templateView `json:"templates" jsonschema:"newest version of each template"`
}

type connectorsAnswer struct {
	Connectors []connectorView `json:"connectors" jsonschema:"every connector a config can use"`
}

func (t tools) addReadTools(srv *sdk.Server) {
	addTool(srv, &sdk.Tool{Name: "get_run", Annotations: readOnly(),
		Description: "Get a run's status, stats and error. Poll it after run_pipeline until terminal is true."}, t.getRun)
	addTool(srv, &sdk.Tool{Name: "list_runs", Annotations: readOnly(),
		Description: "List runs, newest first, with optional filters; page with cursor."}, t.listRuns)
	addTool(srv, &sdk.Tool{Name: "get_run_logs", Annotations: readOnly(),
		Description: "Read a run's persisted log lines (INFO and up); continue with after=next until done."}, t.runLogs)
	addTool(srv, &sdk.Tool{Name: "validate_config", Annotations: readOnly(),
		Description: "Check a pipeline config as a submission would, without running it; lists every error with its path."}, t.validate)
	if t.s.deps.Templates != nil {
		addTool(srv, &sdk.Tool{Name: "list_templates", Annotations: readOnly(),
			Description: "List the registered templates (newest versions) with their params."}, t.listTemplates)
		addTool(srv, &sdk.Tool{Name: "get_template", Annotations: readOnly(),
			Description: "Get one template's settings and the params run_template accepts."}, t.getTemplate)
	}
	if t.s.deps.Connectors != nil {
		addTool(srv, &sdk.Tool{Name: "list_connectors", Annotations: readOnly(),
			Description: "List the connectors a config can use, with the JSON Schema of each one's config."}, t.listConnectors)
	}
	if t.s.deps.Cluster != nil {
		addTool(srv, &sdk.Tool{Name: "cluster_status", Annotations: readOnly(),
			Description: "Show the live members, their pools and the pending runs per pool."}, t.clusterStatus)
	}
}

func (t tools) getRun(ctx context.Context, _ *sdk.CallToolRequest, in runIDArgs) (*sdk.CallToolResult, runAnswer, error) {
	rec, err := t.s.deps.Runs.Get(ctx, t.p, in.RunID)
	if err != nil {
		return nil, runAnswer{}, t.s.fail(ctx, "get_run", err)
	}
	return nil, t.runAnswer(rec), nil
}

func (t tools) runAnswer(rec *runs.Record) runAnswer {
	return runAnswer{Run: toRunView(rec, t.s.redact), Terminal: run.Status(rec.Status).Terminal()}
}

func (t tools) listRuns(ctx context.Context, _ *sdk.CallToolRequest, in listRunsArgs) (*sdk.CallToolResult, listRunsAnswer, error) {
	limit := in.Limit
	if limit == 0 {
		limit = defaultListLimit
	}
	if limit < 1 || limit > maxListLimit {
		return nil, listRunsAnswer{}, badArgument("limit", "must be between 1 and 500")
	}
	statuses := make([]string, 0, len(in.Status))
	for _, st := range in.Status {
		if _, err := run.ParseStatus(string(st)); err != nil {
			return nil, listRunsAnswer{}, badArgument("status", err.Error())
		}
		statuses = append(statuses, string(st))
	}
	page, err := t.s.deps.Runs.List(ctx, t.p, runs.Filter{Status: statuses, Name: in.Name, Pool: in.Pool,
		RunKey: in.RunKey, Labels: in.Labels, Limit: limit, Cursor: in.Cursor})
	if err != nil {
		return nil, listRunsAnswer{}, t.s.fail(ctx, "list_runs", err)
	}
	out := listRunsAnswer{Runs: make([]runView, 0, len(page.Runs)), NextCursor: page.NextCursor}
	for _, r := range page.Runs {
		out.Runs = append(out.Runs, toRunView(r, t.s.redact))
	}
	return nil, out, nil
}

func (t tools) runLogs(ctx context.Context, _ *sdk.CallToolRequest, in logsArgs) (*sdk.CallToolResult, logsAnswer, error) {
	limit := in.Limit
	if limit == 0 {
		limit = defaultLogLimit
	}
	if limit < 1 || limit > maxLogLimit {
		return nil, logsAnswer{}, badArgument("limit", "must be between 1 and 5000")
	}
	page, err := t.s.deps.Runs.Logs(ctx, t.p, in.RunID, in.After, limit)
	if err != nil {
		return nil, logsAnswer{}, t.s.fail(ctx, "get_run_logs", err)
	}
	out := logsAnswer{Lines: make([]logLine, 0, len(page.Lines)), Next: page.Next, Done: page.Done}
	for _, l := range page.Lines {
		out.Lines = append(out.Lines, logLine{Seq: l.Seq, At: stamp(l.At), Level: l.Level,
			Message: t.s.redact(l.Message), Attrs: l.Attrs})
	}
	return nil, out, nil
}

// validate answers a config the service refuses as invalid (valid=false with the REST
// code and field errors) rather than as a tool error: an invalid config is the answer
// asked for. Other refusals (a forbidden caller, an unreachable history) stay errors.
func (t tools) validate(ctx context.Context, _ *sdk.CallToolRequest, in validateArgs) (*sdk.CallToolResult, validateAnswer, error) {
	warnings, err := t.s.deps.Runs.Validate(ctx, t.p, []byte(in.Config), in.Params, in.Pool)
	if err == nil {
		return nil, validateAnswer{Valid: true, Errors: []fieldError{}, Warnings: warnings}, nil
	}
	te, ok := t.s.fail(ctx, "validate_config", err).(*toolError)
	if !ok || !configCode(te.Code) {
		return nil, validateAnswer{}, te
	}
	return nil, validateAnswer{Code: te.Code, Message: te.Message, Errors: fieldErrors(te), Warnings: []string{}}, nil
}

// configCode says whether a code is about the config itself (SPEC §2.9's 422 family).
func configCode(code string) bool {
	switch code {
	case "invalid_config", "invalid_params", "directive_refused", "pool_unserved", "pool_override_denied",
		"vault_key_required", "secret_params_refused", "secret_param_misplaced", "shard_refused", "state_format_refused",
		"path_refused", "host_refused", "history_refused":
		return true
	}
	return false
}

// fieldErrors reads the per-path errors out of the REST details: details.errors for
// config errors, the details themselves for a refused directive.
func fieldErrors(te *toolError) []fieldError {
	out := []fieldError{}
	list, _ := te.Details["errors"].([]map[string]any)
	if len(list) == 0 && te.Details["path"] != nil {
		list = []map[string]any{te.Details}
	}
	for _, e := range list {
		fe := fieldError{}
		fe.Path, _ = e["path"].(string)
		fe.Message, _ = e["message"].(string)
		fe.Line, _ = e["line"].(int)
		fe.Column, _ = e["column"].(int)
		out = append(out, fe)
	}
	if len(out) == 0 {
		out = append(out, fieldError{Message: te.Message})
	}
	return out
}

func (t tools) listTemplates(ctx context.Context, _ *sdk.CallToolRequest, _ noArgs) (*sdk.CallToolResult, templatesAnswer, error) {
	list, err := t.s.deps.Templates.List(ctx, t.p)
	if err != nil {
		return nil, templatesAnswer{}, t.s.fail(ctx, "list_templates", err)
	}
	out := templatesAnswer{Templates: make([]templateView, 0, len(list))}
	for _, v := range list {
		out.Templates = append(out.Templates, toTemplateView(v))
	}
	return nil, out, nil
}

func (t tools) getTemplate(ctx context.Context, _ *sdk.CallToolRequest, in templateArgs) (*sdk.CallToolResult, templateView, error) {
	v, err := t.s.deps.Templates.Get(ctx, t.p, in.TemplateID)
	if err != nil {
		return nil, templateView{}, t.s.fail(ctx, "get_template", err)
	}
	return nil, toTemplateView(v), nil
}

func (t tools) listConnectors(_ context.Context, _ *sdk.CallToolRequest, _ noArgs) (*sdk.CallToolResult, connectorsAnswer, error) {
	return nil, connectorsAnswer{Connectors: toConnectorViews(t.s.deps.Connectors.Specs())}, nil
}

func (t tools) clusterStatus(ctx context.Context, _ *sdk.CallToolRequest, _ noArgs) (*sdk.CallToolResult, ClusterStatus, error) {
	st, err := t.s.deps.Cluster.Status(ctx)
	if err != nil {
		return nil, ClusterStatus{}, t.s.fail(ctx, "cluster_status", err)
	}
	if st.Pools == nil {
		st.Pools = []string{}
	}
	if st.PendingByPool == nil {
		st.PendingByPool = map[string]int{}
	}
	if st.Members == nil {
		st.Members = []Member{}
	}
	return nil, st, nil
}
