package http

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
)

// The application's run service is what bootstrap hands to New.
var _ RunService = (*runs.Service)(nil)

// DefaultBodyLimit is the request body limit when Config.BodyLimitBytes is zero (SPEC §2.7).
const DefaultBodyLimit int64 = 1 << 20

// DefaultReadTimeout bounds receiving a body when Config.ReadTimeout is zero (SPEC §14.3).
const DefaultReadTimeout = 30 * time.Second

// DefaultPollInterval is the claim-loop interval assumed when Config.PollInterval is zero;
// it sets Retry-After on 429 answers and the polling pace of followed logs.
const DefaultPollInterval = time.Second

// Config is what the handler is configured with; zero values take the defaults.
type Config struct {
	BodyLimitBytes int64
	// ReadTimeout bounds receiving a request body (--read-timeout-secs); past it the
	// read fails and the request answers 408. Zero: DefaultReadTimeout.
	ReadTimeout time.Duration
	Auth        AuthConfig
	// PollInterval is the claim-loop interval: 429 answers tell clients to retry after it,
	// and followed logs poll the history at this pace.
	PollInterval time.Duration
	// Version is the binary version, shown in the OpenAPI document.
	Version string
}

// Deps are the ports the handler calls. Runs is required; a nil Health reports ready, a
// nil Metrics answers 404 at /metrics, nil Connectors lists none, nil RequestMetrics and
// nil Log record nothing.
type Deps struct {
	Runs RunService
	// Templates serves /v1/templates and the tenant template route; nil: no such routes.
	Templates TemplateService
	// Schedules serves /v1/schedules and the template schedule route; nil: no such routes.
	Schedules ScheduleService
	// Backfills serves POST /v1/backfill; nil: no such route.
	Backfills      BackfillService
	Health         Health
	Metrics        http.Handler
	Connectors     Connectors
	RequestMetrics RequestMetrics
	Log            *slog.Logger
	// MCP serves /mcp (sluice serve --mcp) for the authenticated principal; nil: no
	// such route.
	MCP MCPHandler
	// Approvals serves /v1/change-requests (SPEC §9.5); nil: not_found there.
	Approvals ApprovalService
	// Tracer opens one span per request (SPEC §14.6); nil: execute.NopTracer, which
	// still hands a client's traceparent to the use-cases.
	Tracer execute.Tracer
	// RunChanges tells a followed log stream that its run changed in this process (lines
	// persisted, the run ended), so the stream ends as soon as the run does; nil: the
	// stream re-reads every PollInterval only.
	RunChanges RunChanges
}

// RunChanges is runs.Watch as the log stream uses it.
type RunChanges interface {
	// Follow subscribes to run id's changes; stop releases the subscription.
	Follow(id string) (changed <-chan struct{}, stop func())
}

// server holds what every handler shares; one per New, so two handlers in one process
// (tests, or two listeners) never share state.
type server struct {
	cfg   Config
	deps  Deps
	log   *slog.Logger
	auth  *authenticator
	perms permissions
	doc   []byte // the rendered OpenAPI document
}

// New builds the REST handler. It panics when deps.Runs is nil: that is a wiring bug the
// composition root must not ship.
func New(cfg Config, deps Deps) http.Handler {
	if deps.Runs == nil {
		panic("http.New: Deps.Runs is nil")
	}
	if cfg.BodyLimitBytes <= 0 {
		cfg.BodyLimitBytes = DefaultBodyLimit
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if cfg.ReadTimeout <= 0 {
		cfg.ReadTimeout = DefaultReadTimeout
	}
	if deps.Tracer == nil {
		deps.Tracer = execute.NopTracer{}
	}
	log := deps.Log
	if log == nil {
		log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &server{
		cfg:   cfg,
		deps:  deps,
		log:   log,
		auth:  newAuthenticator(cfg.Auth),
		perms: permissionTable(),
	}
	// gin keeps its mode in an atomic package variable; release mode only silences its
	// debug printing, it changes no behaviour we rely on.
	gin.SetMode(gin.ReleaseMode)
	e := gin.New()
	e.RedirectTrailingSlash = false
	e.RedirectFixedPath = false
	e.ContextWithFallback = true
	e.Use(s.accessLog, s.trace, s.observe, s.recover, s.authorize, s.checkText, s.limitBody)
	e.NoRoute(s.noRoute)
	// A known path with another method answers 405 with Allow (gin sets it), not 404.
	e.HandleMethodNotAllowed = true
	e.NoMethod(s.noMethod)
	s.routes(e)
	s.doc = renderOpenAPI(cfg.Version, deps.MCP != nil)
	return e
}

// routes registers every route. The OpenAPI document must list exactly these (a test
// compares them), and the permission table says who may call each.
func (s *server) routes(e *gin.Engine) {
	e.GET("/livez", s.livez)
	e.GET("/readyz", s.readyz)
	e.GET("/metrics", s.metrics)

	v1 := e.Group("/v1")
	v1.POST("/runs", s.submit)
	v1.GET("/runs", s.list)
	v1.GET("/runs/:id", s.get)
	v1.DELETE("/runs/:id", s.delete)
	v1.GET("/runs/:id/shards", s.shards)
	v1.GET("/runs/:id/config", s.config)
	v1.POST("/runs/:id/cancel", s.cancel)
	v1.POST("/runs/:id/rollback", s.rollback)
	v1.GET("/runs/:id/logs", s.logs)
	v1.GET("/audit", s.audit)
	v1.GET("/connectors", s.connectors)
	v1.GET("/openapi.json", s.openapi)
	v1.POST("/templates", s.withTemplates(s.registerTemplate))
	v1.GET("/templates", s.withTemplates(s.listTemplates))
	v1.GET("/templates/:id", s.withTemplates(s.getTemplate))
	v1.DELETE("/templates/:id", s.withTemplates(s.deleteTemplate))
	v1.POST("/templates/:id/runs", s.withTemplates(s.runTemplate))
	v1.POST("/templates/:id/fanout", s.withTemplates(s.fanout))
	v1.POST("/tenants/:tenant/templates/:id/runs", s.withTemplates(s.runTemplate))
	v1.POST("/templates/:id/schedules", s.withSchedules(s.createSchedule))
	v1.GET("/schedules", s.withSchedules(s.listSchedules))
	v1.GET("/schedules/preview", s.withSchedules(s.previewSchedule))
	v1.GET("/schedules/:id", s.withSchedules(s.getSchedule))
	v1.DELETE("/schedules/:id", s.withSchedules(s.deleteSchedule))
	v1.POST("/schedules/:id/pause", s.withSchedules(s.pauseSchedule))
	v1.POST("/schedules/:id/resume", s.withSchedules(s.resumeSchedule))
	v1.GET("/schedules/:id/ticks", s.withSchedules(s.scheduleTicks))
	v1.POST("/backfill", s.withBackfills(s.backfill))
	v1.GET("/change-requests", s.withApprovals(s.listChangeRequests))
	v1.GET("/change-requests/:id", s.withApprovals(s.getChangeRequest))
	v1.POST("/change-requests/:id/approve", s.withApprovals(s.approveChangeRequest))
	v1.POST("/change-requests/:id/reject", s.withApprovals(s.rejectChangeRequest))
	if s.deps.MCP != nil {
		for _, m := range mcpMethods {
			e.Handle(m, mcpRoute, s.mcp)
		}
	}
}

// mcpRoute is where MCP's streamable HTTP transport is mounted; its methods are the
// transport's (POST messages, GET a stream, DELETE a session).
const mcpRoute = "/mcp"

var mcpMethods = []string{http.MethodPost, http.MethodGet, http.MethodDelete}

// mcp hands the request to the MCP transport behind the same bearer auth and body limit
// as the REST routes; the tools act as the authenticated principal.
func (s *server) mcp(c *gin.Context) {
	s.deps.MCP.For(principal(c)).ServeHTTP(c.Writer, c.Request)
}

// observe records every answered request by route pattern (SPEC §10).
func (s *server) observe(c *gin.Context) {
	start := time.Now()
	c.Next()
	if s.deps.RequestMetrics == nil {
		return
	}
	route := c.FullPath()
	if route == "" {
		route = "unmatched" // raw paths would let clients mint label values
	}
	s.deps.RequestMetrics.Observe(c.Request.Method, route, c.Writer.Status(), time.Since(start))
}

// recover turns a handler panic into a generic 500; the panic value is logged, never sent.
func (s *server) recover(c *gin.Context) {
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.ErrorContext(c.Request.Context(), "http handler panicked",
				"method", c.Request.Method, "route", c.FullPath(), "panic", redact(fmt.Sprint(v)))
			if !c.Writer.Written() {
				writeError(c, internalError())
			}
			c.Abort()
		}
	}()
	c.Next()
}

// limitBody caps every request body (SPEC §2.7) in size and in time (§14.3). A declared
// length over the limit is refused before reading; a body that grows past it fails its
// read with 413, one that takes longer than the read timeout with 408.
func (s *server) limitBody(c *gin.Context) {
	if c.Request.ContentLength > s.cfg.BodyLimitBytes {
		s.refuseUnread(c, tooLarge(s.cfg.BodyLimitBytes))
		c.Abort()
		return
	}
	body := http.MaxBytesReader(c.Writer, c.Request.Body, s.cfg.BodyLimitBytes)
	c.Request.Body = deadlineBody(c, body, s.cfg.ReadTimeout)
	c.Next()
}

func (s *server) noRoute(c *gin.Context) {
	s.fail(c, apiErrorf(http.StatusNotFound, codeNotFound, "no route %s %s", c.Request.Method, c.Request.URL.Path))
}

func (s *server) noMethod(c *gin.Context) {
	s.fail(c, apiErrorf(http.StatusMethodNotAllowed, codeMethodNotAllowed, "%s is not allowed on %s; allowed: %s",
		c.Request.Method, c.Request.URL.Path, c.Writer.Header().Get("Allow")))
}

func (s *server) livez(c *gin.Context) {
	c.JSON(http.StatusOK, gin.H{"status": "ok"})
}

func (s *server) metrics(c *gin.Context) {
	if s.deps.Metrics == nil {
		s.fail(c, apiErrorf(http.StatusNotFound, codeNotFound, "metrics are not enabled on this server"))
		return
	}
	s.deps.Metrics.ServeHTTP(c.Writer, c.Request)
}

func (s *server) openapi(c *gin.Context) {
	c.Data(http.StatusOK, "application/json", s.doc)
}
