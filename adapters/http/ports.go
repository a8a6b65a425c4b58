package http

import (
	"context"
	"net/http"
	"time"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// RunService is what the handlers need from application/runs. Every method takes the
// authenticated principal so the service can enforce tenancy itself; the handlers only
// add the route-level permission check in front of it.
type RunService interface {
	Submit(ctx context.Context, req runs.SubmitRequest) (runs.SubmitResult, error)
	Get(ctx context.Context, p runs.Principal, id string) (*runs.Record, error)
	List(ctx context.Context, p runs.Principal, f runs.Filter) (runs.Page, error)
	// Cancel returns immediate=true when the run ended at once (or was already terminal)
	// and false when a running run was only signalled.
	Cancel(ctx context.Context, p runs.Principal, id string) (rec *runs.Record, immediate bool, err error)
	Delete(ctx context.Context, p runs.Principal, id string) error
	// Rollback submits a new run from a stored config; config replaces it when non-nil.
	Rollback(ctx context.Context, p runs.Principal, id string, config []byte) (runs.SubmitResult, error)
	// Config returns the stored config, already redacted.
	Config(ctx context.Context, p runs.Principal, id string) (string, error)
	Logs(ctx context.Context, p runs.Principal, id string, after int64, limit int) (runs.LogPage, error)
	// Follow announces a follower of the run's log, so the run's end is notified to every
	// member (runs.Service.Follow).
	Follow(ctx context.Context, p runs.Principal, id string) error
	// Shards returns a page of a run's shards; cursor is the previous page's NextCursor.
	Shards(ctx context.Context, p runs.Principal, id, cursor string, limit int) (runs.ShardPage, error)
	Audit(ctx context.Context, p runs.Principal, after int64, limit int) ([]runs.AuditEntry, error)
}

// Health reports whether this member can take work (GET /readyz).
type Health interface {
	Ready(ctx context.Context) Readiness
}

// Readiness is the body of /readyz (SPEC §2.6).
type Readiness struct {
	// Status is a short word for people ("ok", "draining", "history_unavailable"); empty
	// lets the handler derive it from the flags.
	Status    string
	HistoryOK bool
	QueueOK   bool
	Draining  bool
	Cluster   Cluster
}

// Cluster is the cluster block of /readyz.
type Cluster struct {
	Enabled   bool
	Instances int
	// Pools are this member's pools; nil renders null (a member without pool support).
	Pools   []string
	Members []Member
}

// Member is one live member as /readyz lists it.
type Member struct {
	InstanceID    string
	Listen        string
	Pools         []string
	InFlight      int
	MaxConcurrent int
}

// Connectors lists the registered connector specs (GET /v1/connectors).
type Connectors interface {
	Specs() []pipeline.Spec
}

// RequestMetrics records one answered request (SPEC §10 sluice_serve_requests_total and
// sluice_serve_request_duration_seconds). route is the route pattern, never the raw path,
// so run ids cannot become label values.
type RequestMetrics interface {
	Observe(method, route string, status int, dur time.Duration)
}

// MCPHandler is the MCP transport (SPEC §11). For returns the handler whose tools act as
// p; the REST layer has already authenticated p and checked the route's role.
type MCPHandler interface {
	For(p runs.Principal) http.Handler
}
