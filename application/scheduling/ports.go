package scheduling

import (
	"context"
	"time"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/schedule"
)

// Schedule is a stored schedule (SPEC §9.2).
type Schedule struct {
	ID             string
	TemplateID     string
	Cron           string // as given; it parsed when the schedule was created
	Timezone       string // an IANA name
	StartDate      string // local date, inclusive; "" = ticks after CreatedAt
	Catchup        bool
	MaxCatchupRuns int
	Overlap        schedule.OverlapPolicy
	// Params is a JSON object of the param texts, or its vault ciphertext (base64, bound
	// to the schedule id) when ParamsSealed.
	Params       string
	ParamsSealed bool
	Pool         string // "" = the template's, then the config's, then default
	Labels       map[string]string
	Paused       bool
	CreatedBy    string
	CreatedAt    time.Time
	UpdatedAt    time.Time
	// LastTick is the instant of the newest recorded tick, zero when none; the store
	// fills it on reads and ignores it on writes.
	LastTick time.Time
}

// Tick is one recorded tick of a schedule.
type Tick struct {
	ScheduleID string
	Instant    time.Time
	Status     schedule.Outcome // created, queued or skipped
	Reason     string           // why it was skipped
	RunID      string           // "" when skipped
	// SummaryCount > 0 marks a row that stands for that many missed ticks, from
	// SummaryFirst to Instant.
	SummaryCount int
	SummaryFirst time.Time
	Epoch        int64 // the leader term that recorded it
	CreatedAt    time.Time
}

// Store keeps schedules and their ticks. Errors: run.ErrNotFound for a missing schedule
// (or, from AddSchedule, template); run.ErrLeaseLost from RecordTick when the term moved
// on; run.ErrUnavailable when the history does not answer.
type Store interface {
	// AddSchedule stores sc; the template must exist (checked in the same transaction
	// that deleting a template takes, so a schedule never points at a deleted template).
	AddSchedule(ctx context.Context, sc *Schedule) error
	GetSchedule(ctx context.Context, id string) (*Schedule, error)
	// ListSchedules returns every schedule, oldest first.
	ListSchedules(ctx context.Context) ([]*Schedule, error)
	// SchedulesStamp is a cheap summary of the schedules that changes when one is added,
	// deleted, paused or resumed, on any member: the leader reads every schedule again
	// only when it moved. (A delete and an add between two looks whose new schedule is
	// stamped no later than the newest before may go unseen: the change's NOTIFY and the
	// leader's periodic full read cover that.)
	SchedulesStamp(ctx context.Context) (string, error)
	// SetPaused sets the paused flag and returns the schedule as stored.
	SetPaused(ctx context.Context, id string, paused bool, at time.Time) (*Schedule, error)
	// DeleteSchedule removes a schedule with its ticks; its runs stay.
	DeleteSchedule(ctx context.Context, id string) error
	// ListTicks returns up to limit ticks of id with instants before `before` (zero:
	// no bound), newest first.
	ListTicks(ctx context.Context, id string, before time.Time, limit int) ([]Tick, error)
	// RecordTick records a tick without a run (skipped) in its own transaction, after
	// checking that t.Epoch is the current scheduler term. inserted=false when the tick
	// of (schedule, instant) exists already: it is left as it was.
	RecordTick(ctx context.Context, t Tick) (inserted bool, err error)
	// RecordTicks records up to runs.MaxTickBatch ticks of one term as RecordTick would one
	// after the other, in one transaction that checks the term once (a moved-on term
	// records none of them); inserted[i] answers ticks[i].
	RecordTicks(ctx context.Context, ticks []Tick) (inserted []bool, err error)
}

// Templates is what schedules need of the template use-cases.
type Templates interface {
	// CheckParams checks params against the newest version of the template.
	CheckParams(ctx context.Context, id string, supplied map[string]string) (*templates.View, error)
	// Get returns the newest version of a template, with its declared params.
	Get(ctx context.Context, p runs.Principal, id string) (*templates.View, error)
	// Run materializes the newest version and submits it through the one funnel.
	Run(ctx context.Context, p runs.Principal, id string, req templates.RunRequest) (runs.SubmitResult, error)
	// Submissions materializes each request's newest template version as Run does,
	// without submitting: out[i] answers reqs[i], or errs[i] why it cannot be made.
	Submissions(ctx context.Context, p runs.Principal, reqs []templates.SubmissionRequest) (out []runs.SubmitRequest, errs []error)
}

// TickSubmitter is the one funnel's batch door for schedule ticks (runs.Service): every
// request gets Submit's checks, then one store transaction creates the batch. res[i] and
// errs[i] answer reqs[i]; err is the batch's (a lost term, an unanswered history), and
// then nothing of it was stored.
type TickSubmitter interface {
	SubmitTicks(ctx context.Context, reqs []runs.SubmitRequest) (res []runs.SubmitResult, errs []error, err error)
}

// Submitter is the one submit funnel (runs.Service).
type Submitter interface {
	Submit(ctx context.Context, req runs.SubmitRequest) (runs.SubmitResult, error)
}

// Candidate is who campaigns to lead the scheduler.
type Candidate struct {
	InstanceID string
	Host       string
	PID        int
	Version    string
	// TTL is --leader-ttl-secs: a term whose heartbeat is older may be taken over.
	TTL time.Duration
}

// Elector decides which member creates ticks (SPEC §9.3).
type Elector interface {
	// Campaign tries once to become the leader and returns its lease, or nil (no error)
	// while another member leads. A leader whose heartbeat is older than c.TTL is
	// deposed first, so a later campaign can win.
	Campaign(ctx context.Context, c Candidate) (Lease, error)
}

// Lease is one leader term.
type Lease interface {
	// Epoch is the term's number; every tick insert checks it (fencing).
	Epoch() int64
	// Heartbeat renews the term; an error means it may be lost: stop creating ticks.
	Heartbeat(ctx context.Context) error
	// Resign ends the term cleanly (the leaders row gets its stop time) and releases
	// the lock, so a standby takes over at once. Safe to call twice.
	Resign(ctx context.Context) error
}

// Metrics counts what became of due ticks (sluice_schedule_ticks_total{outcome}); the
// outcome is a schedule.Outcome value.
type Metrics interface {
	ScheduleTick(outcome string)
}

type nopMetrics struct{}

func (nopMetrics) ScheduleTick(string) {}
