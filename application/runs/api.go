package runs

import (
	"time"
)

// Role is a principal's role (SPEC §2.2).
type Role string

// Roles, weakest first.
const (
	Viewer   Role = "viewer"
	Operator Role = "operator"
	Admin    Role = "admin"
)

// Principal is who asks. Tenant is "" for untenanted principals.
type Principal struct {
	Name   string
	Role   Role
	Tenant string
}

// System is the actor of transitions nobody asked for (reclaim, purge, timeouts).
var System = Principal{Name: "system", Role: Admin}

// SubmitRequest is everything any entry point can ask of the ONE submit funnel.
type SubmitRequest struct {
	Principal   Principal
	TriggerKind string // a run.TriggerKind value
	// Config is the pipeline text: YAML or JSON (a JSON object in a REST body is passed
	// here re-encoded as JSON text).
	Config         []byte
	Name           string // overrides the config's name
	Labels         map[string]string
	Pool           string
	IdempotencyKey string
	RunKey         string
	TimeoutSecs    int
	Callback       *Callback
	Clock          *time.Time // the logical instant; nil = now
	Params         map[string]string
	Tenant         string // stamped tenant (tenant routes); must match a tenant principal's own
	// RollbackOf is the run id a rollback was made from (for the audit trail).
	RollbackOf string
	// TemplateID and TemplateVersion record the template a run materializes (§8.1).
	TemplateID      string
	TemplateVersion int
	// Serial makes the run wait queued while another run of its pipeline key is active
	// (a schedule with overlap_policy queue). Incremental configs are serial anyway.
	Serial bool
}

// SubmitResult is the answer to a submission.
type SubmitResult struct {
	RunID    string
	Status   string
	Replayed bool // true for an idempotent replay or an existing run_key
}

// Page is one page of a list.
type Page struct {
	Runs       []*Record
	NextCursor string // "" on the last page
}

// ShardPage is one page of a run's shards.
type ShardPage struct {
	Shards     []ShardRecord
	NextCursor string // "" on the last page
}

// LogPage is one page of a run's persisted log.
type LogPage struct {
	Lines []LogLine
	Next  int64 // the seq to continue after
	// Done is true when the run is terminal and every line has been returned.
	Done bool
}
