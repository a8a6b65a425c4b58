package runs

import (
	"time"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/schedule"
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
	// Retry is the run's retry policy; it wins over the config's retry block (SPEC §14.5).
	Retry    *Retry
	Callback *Callback
	Clock    *time.Time // the logical instant; nil = now
	Params   map[string]string
	Tenant   string // stamped tenant (tenant routes); must match a tenant principal's own
	// RollbackOf is the run id a rollback was made from (for the audit trail).
	RollbackOf string
	// TemplateID and TemplateVersion record the template a run materializes (§8.1).
	TemplateID      string
	TemplateVersion int
	// Serial makes the run wait queued while another run of its pipeline key is active
	// (a schedule with overlap_policy queue). Incremental configs are serial anyway.
	Serial bool
	// Propose asks for a change request even when approval is not required (the MCP
	// propose_run tool). Under --require-approval run every request from a person or an
	// agent is proposed anyway (see Service.Submit).
	Propose bool
	// MaxActive lets that many runs of a serial pipeline key be active at once (a
	// backfill's max_active); 0 means 1.
	MaxActive int
	// Zone is the zone of run_date and of the config's date directives; nil is the
	// server's --timezone. A schedule passes its own (SPEC §9.2).
	Zone *time.Location
	// Backfill is the window of a backfill run (SPEC §9.4): ${backfill.start|end} are
	// bound into the stored config.
	Backfill *execute.Window
	// Tick, when set, creates the run for a schedule tick: the store decides overlap and
	// records the tick in the transaction that creates the run (SPEC §9.2).
	Tick *Tick
}

// Tick is the schedule tick a run is submitted for.
type Tick struct {
	ScheduleID string
	Instant    time.Time
	// Overlap is the schedule's overlap_policy: with skip, a pipeline key that has queued
	// or active work gets the tick recorded skipped and no run; with queue, the run is
	// stored queued behind that work.
	Overlap schedule.OverlapPolicy
	// Epoch is the scheduler term the tick is created under: the store refuses it with
	// run.ErrLeaseLost once another leader has taken over (fencing).
	Epoch int64
}

// SubmitResult is the answer to a submission.
type SubmitResult struct {
	RunID    string
	Status   string
	Replayed bool // true for an idempotent replay or an existing run_key
	// ChangeRequestID is set, with Status "proposed" and no RunID, when the request was
	// recorded as a change request instead of creating a run (SPEC §9.5).
	ChangeRequestID string
	// Skipped is the reason a schedule tick was recorded skipped instead of creating a
	// run (RunID is then ""); "" otherwise.
	Skipped string
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
