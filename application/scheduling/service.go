package scheduling

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"

	"time"

	"github.com/google/uuid"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/pool"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/schedule"
)

// Limits of the read routes.
const (
	DefaultPreviewCount = 5
	MaxPreviewCount     = 1000
	DefaultTickLimit    = 100
	MaxTickLimit        = 1000
)

// secretMask stands in for the value of a secret param in answers.
const secretMask = "(secret)"

// Deps are the ports of the schedule use-cases. Store and Templates are required.
type Deps struct {
	Store     Store
	Templates Templates
	// Runs is the submit funnel, for backfills of a config.
	Runs Submitter
	// Ticks creates due ticks in batches (runs.Service); nil: one tick at a time through
	// Templates.Run, one transaction each.
	Ticks TickSubmitter
	// Sealer seals schedule params (SPEC §7.3); nil: they are stored as given.
	Sealer  runs.Sealer
	Clock   func() time.Time // nil: time.Now
	NewID   func() string    // nil: UUIDv7
	Log     *slog.Logger     // nil: discard
	Metrics Metrics          // nil: nothing counted
	// Audit records schedule and backfill changes (SPEC §2.10); nil records nothing.
	Audit Auditor
	// Proposer records backfills as change requests under --require-approval run;
	// Checker checks a backfill's config before it is proposed (nil: not checked).
	Proposer BackfillProposer
	Checker  ConfigChecker
}

// Config holds the server settings schedules read.
type Config struct {
	// Zone is --timezone, the default timezone of a new schedule; nil = UTC.
	Zone *time.Location
	// RequireApproval is --require-approval run: a backfill becomes one change request
	// and approval creates its windows (SPEC §9.5).
	RequireApproval bool
	// PassWorkers is how many batches of ticks (without Deps.Ticks: schedules) a tick
	// pass has in flight at once (≤ 1: one at a time). More than one pays on a history
	// that takes concurrent writers (PostgreSQL); SQLite has one writer, so there it only
	// adds waiting.
	PassWorkers int
	// TickBatch is how many due ticks one transaction creates (≤ 0: runs.MaxTickBatch,
	// which also bounds it).
	TickBatch int
	// Reload is the longest the leader works on the schedules it loaded before reading
	// them all again (≤ 0: DefaultReload).
	Reload time.Duration
}

// Service holds the schedule use-cases and the tick pass. Safe for concurrent use.
type Service struct {
	deps Deps
	cfg  Config
	wake chan struct{} // a new or resumed schedule: the leader looks again at once
	// loaded is the leader's copy of the schedules.
	loaded loadedSchedules
}

// New returns the schedule use-cases.
func New(deps Deps, cfg Config) *Service {
	if deps.Clock == nil {
		deps.Clock = time.Now
	}
	if deps.NewID == nil {
		deps.NewID = func() string { return uuid.Must(uuid.NewV7()).String() }
	}
	if deps.Log == nil {
		deps.Log = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if deps.Metrics == nil {
		deps.Metrics = nopMetrics{}
	}
	if cfg.Zone == nil {
		cfg.Zone = time.UTC
	}
	if cfg.TickBatch <= 0 {
		cfg.TickBatch = runs.MaxTickBatch
	}
	if cfg.Reload <= 0 {
		cfg.Reload = DefaultReload
	}
	return &Service{deps: deps, cfg: cfg, wake: make(chan struct{}, 1)}
}

// CreateRequest is POST /v1/templates/{id}/schedules.
type CreateRequest struct {
	TemplateID string
	Cron       string
	Timezone   string // "" = the server's --timezone
	StartDate  string
	Catchup    bool
	// MaxCatchupRuns nil means 1; given, it must be within 1..1000.
	MaxCatchupRuns *int
	Overlap        string // "" = skip
	Params         map[string]string
	Pool           string
	Labels         map[string]string
}

// View is a schedule as the API shows it; values of secret params are masked.
type View struct {
	ID             string
	TemplateID     string
	Cron           string
	Timezone       string
	StartDate      string
	Catchup        bool
	MaxCatchupRuns int
	Overlap        string
	Params         map[string]string
	Pool           string
	Labels         map[string]string
	Paused         bool
	CreatedBy      string
	CreatedAt      time.Time
	LastTick       time.Time // zero: none yet
	NextTick       time.Time // the next instant the cron fires at; zero: never
}

// Create stores a schedule on a template (admin). Every setting is checked first, each
// refusal naming its field; params are checked against the template's typed params.
func (s *Service) Create(ctx context.Context, p runs.Principal, req CreateRequest) (*View, error) {
	if err := runs.Require(p, runs.Admin, "create schedules"); err != nil {
		return nil, err
	}
	sc := &Schedule{
		ID: s.deps.NewID(), TemplateID: req.TemplateID, StartDate: req.StartDate, Catchup: req.Catchup,
		MaxCatchupRuns: schedule.DefaultMaxCatchup, Pool: req.Pool, Labels: maps.Clone(req.Labels),
		CreatedBy: p.Name,
	}
	spec, err := schedule.Parse(req.Cron)
	if err != nil {
		return nil, invalid("cron", err.Error())
	}
	sc.Cron = req.Cron
	loc := s.cfg.Zone
	if req.Timezone != "" {
		if loc, err = schedule.LoadZone(req.Timezone); err != nil {
			return nil, invalid("timezone", err.Error())
		}
	}
	sc.Timezone = loc.String()
	now := s.deps.Clock().UTC().Truncate(time.Millisecond) // what the history keeps
	if _, err := schedule.StartBound(req.StartDate, now, loc); err != nil {
		return nil, invalid("start_date", err.Error())
	}
	if req.MaxCatchupRuns != nil {
		if err := schedule.ValidateMaxCatchup(*req.MaxCatchupRuns); err != nil {
			return nil, invalid("max_catchup_runs", err.Error())
		}
		sc.MaxCatchupRuns = *req.MaxCatchupRuns
	}
	if sc.Overlap, err = schedule.ParseOverlapPolicy(req.Overlap); err != nil {
		return nil, invalid("overlap_policy", err.Error())
	}
	if req.Pool != "" {
		if err := pool.Validate(req.Pool); err != nil {
			return nil, invalid("pool", err.Error())
		}
	}
	if err := run.CheckLabels(req.Labels, run.MaxLabels); err != nil {
		return nil, invalid("labels", err.Error())
	}
	tv, err := s.deps.Templates.CheckParams(ctx, req.TemplateID, req.Params)
	if err != nil {
		return nil, err
	}
	if err := s.sealParams(ctx, sc, req.Params); err != nil {
		return nil, err
	}
	sc.CreatedAt, sc.UpdatedAt = now, now
	if err := s.deps.Store.AddSchedule(ctx, sc); err != nil {
		return nil, err
	}
	s.deps.Log.InfoContext(ctx, "schedule created", "schedule_id", sc.ID, "template_id", sc.TemplateID,
		"cron", sc.Cron, "timezone", sc.Timezone, "next_tick", spec.Next(now, loc).UTC().Format(time.RFC3339))
	s.audit(ctx, p, ActionScheduleCreated, scheduleDetails(sc))
	s.Wake()
	return s.view(sc, req.Params, secretNames(tv.Params)), nil
}

// Get returns one schedule (viewer).
func (s *Service) Get(ctx context.Context, p runs.Principal, id string) (*View, error) {
	if err := runs.Require(p, runs.Viewer, "read schedules"); err != nil {
		return nil, err
	}
	sc, err := s.deps.Store.GetSchedule(ctx, id)
	if err != nil {
		return nil, err
	}
	return s.viewStored(ctx, p, sc, map[string]map[string]bool{})
}

// List returns every schedule, oldest first (viewer).
func (s *Service) List(ctx context.Context, p runs.Principal) ([]*View, error) {
	if err := runs.Require(p, runs.Viewer, "read schedules"); err != nil {
		return nil, err
	}
	list, err := s.deps.Store.ListSchedules(ctx)
	if err != nil {
		return nil, err
	}
	secrets := map[string]map[string]bool{} // per template, read once per call
	out := make([]*View, 0, len(list))
	for _, sc := range list {
		v, err := s.viewStored(ctx, p, sc, secrets)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// Pause stops a schedule's ticks from creating runs: due ticks are recorded skipped
// (paused) while queued runs still promote (operator).
func (s *Service) Pause(ctx context.Context, p runs.Principal, id string) (*View, error) {
	return s.setPaused(ctx, p, id, true)
}

// Resume lets a paused schedule create runs again, from its next tick (operator).
func (s *Service) Resume(ctx context.Context, p runs.Principal, id string) (*View, error) {
	v, err := s.setPaused(ctx, p, id, false)
	if err == nil {
		s.Wake()
	}
	return v, err
}

func (s *Service) setPaused(ctx context.Context, p runs.Principal, id string, paused bool) (*View, error) {
	if err := runs.Require(p, runs.Operator, "pause or resume schedules"); err != nil {
		return nil, err
	}
	sc, err := s.deps.Store.SetPaused(ctx, id, paused, s.deps.Clock().UTC())
	if err != nil {
		return nil, err
	}
	s.changed() // a resume also wakes the leader (Resume)
	s.deps.Log.InfoContext(ctx, "schedule paused flag set", "schedule_id", id, "paused", paused, "principal", p.Name)
	action := ActionScheduleResumed
	if paused {
		action = ActionSchedulePaused
	}
	s.audit(ctx, p, action, scheduleDetails(sc))
	return s.viewStored(ctx, p, sc, map[string]map[string]bool{})
}

// Delete removes a schedule and its ticks (admin); the runs it created stay.
func (s *Service) Delete(ctx context.Context, p runs.Principal, id string) error {
	if err := runs.Require(p, runs.Admin, "delete schedules"); err != nil {
		return err
	}
	sc, err := s.deps.Store.GetSchedule(ctx, id)
	if err != nil {
		return err
	}
	if err := s.deps.Store.DeleteSchedule(ctx, id); err != nil {
		return err
	}
	s.changed()
	s.deps.Log.InfoContext(ctx, "schedule deleted", "schedule_id", id, "principal", p.Name)
	s.audit(ctx, p, ActionScheduleDeleted, scheduleDetails(sc))
	return nil
}

// Ticks returns the recorded ticks of a schedule, newest first (viewer): up to limit
// (0 = DefaultTickLimit) with instants before `before` (zero = newest).
func (s *Service) Ticks(ctx context.Context, p runs.Principal, id string, before time.Time, limit int) ([]Tick, error) {
	if err := runs.Require(p, runs.Viewer, "read schedules"); err != nil {
		return nil, err
	}
	if limit == 0 {
		limit = DefaultTickLimit
	}
	if limit < 1 || limit > MaxTickLimit {
		return nil, invalid("limit", fmt.Sprintf("%d is outside 1..%d", limit, MaxTickLimit))
	}
	if _, err := s.deps.Store.GetSchedule(ctx, id); err != nil {
		return nil, err
	}
	return s.deps.Store.ListTicks(ctx, id, before, limit)
}

// Wake makes a waiting leader read the schedules again and look at them at once.
func (s *Service) Wake() {
	s.changed()
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// sealParams stores the params as JSON, sealed to the schedule id with a vault key.
func (s *Service) sealParams(ctx context.Context, sc *Schedule, params map[string]string) error {
	if params == nil {
		params = map[string]string{}
	}
	raw, err := json.Marshal(params)
	if err != nil {
		return fmt.Errorf("encode params: %w", err)
	}
	if s.deps.Sealer == nil {
		sc.Params = string(raw)
		return nil
	}
	ct, err := s.deps.Sealer.Seal(ctx, sc.ID, runs.PurposeScheduleParams, raw)
	if err != nil {
		return fmt.Errorf("seal the params of schedule %s: %w", sc.ID, err)
	}
	sc.Params, sc.ParamsSealed = base64.StdEncoding.EncodeToString(ct), true
	return nil
}

// openParams reads a schedule's params back.
func (s *Service) openParams(ctx context.Context, sc *Schedule) (map[string]string, error) {
	raw := []byte(sc.Params)
	if sc.ParamsSealed {
		ct, err := base64.StdEncoding.DecodeString(sc.Params)
		if err != nil {
			return nil, fmt.Errorf("the sealed params of schedule %s are not base64: %w", sc.ID, runs.ErrVaultTampered)
		}
		if s.deps.Sealer == nil {
			return nil, fmt.Errorf("schedule %s has sealed params and this server has no --vault-key: %w", sc.ID, runs.ErrVaultKeyRequired)
		}
		if raw, err = s.deps.Sealer.Open(ctx, sc.ID, runs.PurposeScheduleParams, ct); err != nil {
			return nil, err
		}
	}
	var out map[string]string
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("the params of schedule %s do not decode: %w", sc.ID, err)
	}
	return out, nil
}

// viewStored is the view of a stored schedule. secrets caches the secret param names of
// each template; a template that cannot be read masks every value.
func (s *Service) viewStored(ctx context.Context, p runs.Principal, sc *Schedule, secrets map[string]map[string]bool) (*View, error) {
	names, ok := secrets[sc.TemplateID]
	if !ok {
		if tv, err := s.deps.Templates.Get(ctx, p, sc.TemplateID); err == nil {
			names = secretNames(tv.Params)
		}
		secrets[sc.TemplateID] = names
	}
	params, err := s.openParams(ctx, sc)
	if err != nil {
		// The schedule is still shown; its params are not.
		s.deps.Log.WarnContext(ctx, "schedule params cannot be opened", "schedule_id", sc.ID, "error", err.Error())
		params = map[string]string{}
	}
	if names == nil {
		names = map[string]bool{}
		for k := range params {
			names[k] = true
		}
	}
	return s.view(sc, params, names), nil
}

func (s *Service) view(sc *Schedule, params map[string]string, secret map[string]bool) *View {
	shown := make(map[string]string, len(params))
	for k, v := range params {
		if secret[k] {
			v = secretMask
		}
		shown[k] = v
	}
	v := &View{
		ID: sc.ID, TemplateID: sc.TemplateID, Cron: sc.Cron, Timezone: sc.Timezone, StartDate: sc.StartDate,
		Catchup: sc.Catchup, MaxCatchupRuns: sc.MaxCatchupRuns, Overlap: string(sc.Overlap), Params: shown,
		Pool: sc.Pool, Labels: maps.Clone(sc.Labels), Paused: sc.Paused, CreatedBy: sc.CreatedBy,
		CreatedAt: sc.CreatedAt, LastTick: sc.LastTick,
	}
	if spec, err := schedule.Parse(sc.Cron); err == nil {
		if loc, err := schedule.LoadZone(sc.Timezone); err == nil {
			from := s.deps.Clock()
			if sc.LastTick.After(from) {
				from = sc.LastTick
			}
			v.NextTick = spec.Next(from, loc)
		}
	}
	if v.Labels == nil {
		v.Labels = map[string]string{}
	}
	return v
}
