package console

import (
	"context"
	"time"

	"github.com/sluicehq/sluice/application/approvals"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/application/templates"
)

// Tokens checks a sign-in token the way the API checks a bearer token, against the same
// principals.
type Tokens interface {
	// Authenticate returns the principal holding token, or an error that may be shown
	// (it never quotes the token).
	Authenticate(token string) (runs.Principal, error)
}

// Signouts remembers console sessions that were signed out before their expiry. The
// session cookie is a signed claim every member with the same principals accepts, so the
// sign-outs must live where every member reads them (the history) and outlast a restart.
// Implementations are safe for concurrent use.
type Signouts interface {
	// RevokeSession records the session id as signed out until expires (its cookie's
	// expiry) and may forget sign-outs whose cookies expired before now. Recording an
	// id twice is no error. Once it returns, SessionRevoked answers true for id on every
	// member sharing the history.
	RevokeSession(ctx context.Context, id string, expires, now time.Time) error
	// SessionRevoked reports whether the session id was signed out. An error means it
	// could not be read: the caller refuses the session.
	SessionRevoked(ctx context.Context, id string) (bool, error)
}

// RequestMetrics records each answered request (SPEC §10: sluice_serve_requests_total and
// sluice_serve_request_duration_seconds), as the API's requests are; route is a pattern,
// never a raw path.
type RequestMetrics interface {
	Observe(method, route string, status int, dur time.Duration)
}

// RunService is what the pages need from application/runs.
type RunService interface {
	Get(ctx context.Context, p runs.Principal, id string) (*runs.Record, error)
	List(ctx context.Context, p runs.Principal, f runs.Filter) (runs.Page, error)
	Cancel(ctx context.Context, p runs.Principal, id string) (rec *runs.Record, immediate bool, err error)
	Rollback(ctx context.Context, p runs.Principal, id string, config []byte) (runs.SubmitResult, error)
	Config(ctx context.Context, p runs.Principal, id string) (string, error)
	Logs(ctx context.Context, p runs.Principal, id string, after int64, limit int) (runs.LogPage, error)
	Shards(ctx context.Context, p runs.Principal, id, cursor string, limit int) (runs.ShardPage, error)
	Audit(ctx context.Context, p runs.Principal, after int64, limit int) ([]runs.AuditEntry, error)
}

// TemplateService is what the template pages need from application/templates.
type TemplateService interface {
	List(ctx context.Context, p runs.Principal) ([]*templates.View, error)
	Get(ctx context.Context, p runs.Principal, id string) (*templates.View, error)
	Versions(ctx context.Context, p runs.Principal, id string) ([]templates.Version, error)
	Run(ctx context.Context, p runs.Principal, id string, req templates.RunRequest) (runs.SubmitResult, error)
}

// ScheduleService is what the schedule pages need from application/scheduling.
type ScheduleService interface {
	List(ctx context.Context, p runs.Principal) ([]*scheduling.View, error)
	Get(ctx context.Context, p runs.Principal, id string) (*scheduling.View, error)
	Pause(ctx context.Context, p runs.Principal, id string) (*scheduling.View, error)
	Resume(ctx context.Context, p runs.Principal, id string) (*scheduling.View, error)
	Ticks(ctx context.Context, p runs.Principal, id string, before time.Time, limit int) ([]scheduling.Tick, error)
	Preview(req scheduling.PreviewRequest) (scheduling.Preview, error)
}

// ApprovalService is what the change-request page needs from application/approvals.
type ApprovalService interface {
	List(ctx context.Context, p runs.Principal, f approvals.Filter) ([]*approvals.ChangeRequest, error)
	Approve(ctx context.Context, p runs.Principal, id string) (*approvals.ChangeRequest, error)
	Reject(ctx context.Context, p runs.Principal, id string) (*approvals.ChangeRequest, error)
}

// Cluster reads the state of the cluster for the cluster page.
type Cluster interface {
	Status(ctx context.Context) (ClusterStatus, error)
}

// ClusterStatus is what the cluster page shows.
type ClusterStatus struct {
	Clustered bool
	Members   []Member
	// Pending counts pending runs per pool.
	Pending map[string]int
	// Leader is the newest scheduler term; nil when no scheduler has led yet.
	Leader *Leader
}

// Member is one membership row.
type Member struct {
	InstanceID    string
	Host          string
	Listen        string
	Version       string
	Pools         []string
	InFlight      int
	MaxConcurrent int
	Draining      bool
	Live          bool
	Stopped       bool
	HeartbeatAt   time.Time
	// HeartbeatAge is how old the last heartbeat is, by the history's clock.
	HeartbeatAge time.Duration
}

// Leader is a scheduler term.
type Leader struct {
	InstanceID  string
	Host        string
	Term        int64
	StartedAt   time.Time
	HeartbeatAt time.Time
	Stopped     bool
}

// Explain turns a use-case error into what the API would answer: its HTTP status, its
// stable code and a message safe to show. known is false for an error the API does not
// map (status 500 and a generic message; the console logs the real error).
type Explain func(err error) (status int, code, message string, known bool)
