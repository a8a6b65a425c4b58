package mcp

import (
	"io"
	"log/slog"
	"net/http"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/sluicehq/sluice/application/runs"
)

// Config is how the MCP server is configured.
type Config struct {
	// AllowMutations (--mcp-allow-mutations) offers the tools that change anything to
	// operator and admin principals; without it every principal gets the read tools only.
	AllowMutations bool
	// Version is the binary version the server introduces itself with.
	Version string
}

// Deps are the ports the tools call. Runs and Errors are required; nil Templates,
// Approvals, Connectors or Cluster leave their tools out.
type Deps struct {
	Runs       RunService
	Templates  TemplateService
	Approvals  ApprovalService
	Connectors Connectors
	Cluster    Cluster
	Errors     Classifier
	// Redact hides secrets in what the tools show (run errors, log lines); nil shows
	// them as stored, which the service has already redacted.
	Redact func(string) string
	Log    *slog.Logger
}

// Server builds MCP servers for principals. It is safe for concurrent use.
type Server struct {
	cfg     Config
	deps    Deps
	log     *slog.Logger
	schemas *sdk.SchemaCache
}

// New returns the MCP server. It panics when deps.Runs or deps.Errors is nil: that is a
// wiring bug the composition root must not ship.
func New(cfg Config, deps Deps) *Server {
	if deps.Runs == nil || deps.Errors == nil {
		panic("mcp.New: Deps.Runs and Deps.Errors are required")
	}
	log := deps.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	// The schemas of the typed tool arguments are the same for every request; the cache
	// keeps a server per request cheap.
	return &Server{cfg: cfg, deps: deps, log: log, schemas: sdk.NewSchemaCache()}
}

func (s *Server) redact(v string) string {
	if s.deps.Redact == nil {
		return v
	}
	return s.deps.Redact(v)
}

// For returns the streamable HTTP handler whose tools act as p. The caller has
// authenticated p. The handler is stateless: nothing outlives the request, so a session
// can never be carried over to another token.
func (s *Server) For(p runs.Principal) http.Handler {
	srv := s.server(p)
	return sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv },
		&sdk.StreamableHTTPOptions{Stateless: true, JSONResponse: true, Logger: s.log})
}

// server is the MCP server of one principal: the read tools for any role, the
// mutating ones only when allowed and the principal is operator or admin.
func (s *Server) server(p runs.Principal) *sdk.Server {
	srv := sdk.NewServer(&sdk.Implementation{Name: "sluice", Version: s.cfg.Version}, &sdk.ServerOptions{
		Instructions: instructions,
		Logger:       s.log,
		SchemaCache:  s.schemas,
		Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}},
	})
	t := tools{s: s, p: p}
	t.addReadTools(srv)
	if s.deps.Approvals != nil && p.Tenant == "" {
		t.addChangeRequestTools(srv)
	}
	if mayPropose(p) {
		t.addProposeTool(srv)
	}
	if s.mayMutate(p) {
		t.addMutatingTools(srv)
	}
	return srv
}

// mayPropose: propose_run needs the operator role only (SPEC §11).
func mayPropose(p runs.Principal) bool {
	return p.Tenant == "" && (p.Role == runs.Operator || p.Role == runs.Admin)
}

// mayMutate is the gate of SPEC §11: --mcp-allow-mutations and an operator or admin.
func (s *Server) mayMutate(p runs.Principal) bool {
	return s.cfg.AllowMutations && mayPropose(p)
}

const instructions = "sluice runs data pipelines (source -> sink). Check a config with validate_config, " +
	"start it with run_pipeline (or a registered template with run_template), then poll get_run until its " +
	"status is completed, failed or cancelled; get_run_logs shows what it logged. propose_run makes a change " +
	"request instead: poll get_change_request until decided, then follow its run_id. Runs have the REST " +
	"shape of GET /v1/runs/{id}. Tool errors are JSON " +
	`{"error": {"code", "message", "details"}} with the same codes as the REST API; details.errors lists ` +
	"config errors with their paths."
