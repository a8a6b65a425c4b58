package scheduling

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/pool"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/schedule"
)

// Limits of a backfill (SPEC §9.4).
const (
	DefaultMaxActive = 1
	MaxMaxActive     = 1000
	// BackfillLabel is the label every run of a backfill carries, so its runs list with
	// GET /v1/runs?label=backfill_id=….
	BackfillLabel = "backfill_id"
)

// BackfillRequest is POST /v1/backfill: a template (with params) or a config, run once
// per window of [From, To).
type BackfillRequest struct {
	Template string
	Config   []byte
	Params   map[string]string
	From, To time.Time
	Window   string // an ISO 8601 duration
	Timezone string // "" = the server's --timezone
	Pool     string
	// MaxActive is how many of its runs may be active at once; nil = 1.
	MaxActive *int
}

// BackfillRun is one window's run.
type BackfillRun struct {
	RunID      string
	Start, End time.Time
	Replayed   bool // the window's run existed already (a re-post)
}

// Backfill is the answer: its id (the same for the same request) and one run per window
// — or, when approval is required, the change request that will create them.
type Backfill struct {
	ID   string
	Runs []BackfillRun
	// ChangeRequestID is set, with no Runs, when the backfill waits for approval.
	ChangeRequestID string
}

// Backfill starts one run per window (operator). Each run has the window's start as its
// logical instant, run key backfill:<start> and ${backfill.start|end} bound, so posting
// the same backfill again creates nothing new. The runs are serial with max_active: the
// rest wait queued and start oldest first. Under --require-approval run the whole
// backfill becomes ONE change request (Backfill.ChangeRequestID) and no run: approval
// creates the windows (SPEC §9.5).
func (s *Service) Backfill(ctx context.Context, p runs.Principal, req BackfillRequest) (*Backfill, error) {
	plan, err := s.planBackfill(p, req)
	if err != nil {
		return nil, err
	}
	if s.cfg.RequireApproval {
		return s.proposeBackfill(ctx, p, req, plan)
	}
	return s.startBackfill(ctx, p, req, plan)
}

// backfillPlan is a checked backfill: its windows, zone, max_active and id.
type backfillPlan struct {
	id        string
	windows   []schedule.Window
	loc       *time.Location
	maxActive int
}

// planBackfill checks a backfill request and computes its windows.
func (s *Service) planBackfill(p runs.Principal, req BackfillRequest) (backfillPlan, error) {
	var plan backfillPlan
	if err := runs.Require(p, runs.Operator, "start backfills"); err != nil {
		return plan, err
	}
	switch {
	case req.Template == "" && len(req.Config) == 0:
		return plan, invalid("template", "give a template id, or a config")
	case req.Template != "" && len(req.Config) > 0:
		return plan, invalid("template", "give either a template id or a config, not both")
	case len(req.Params) > 0 && req.Template == "":
		return plan, invalid("params", "params need a template")
	case req.From.IsZero():
		return plan, invalid("from", "is required: the start of the first window (RFC 3339)")
	case req.To.IsZero():
		return plan, invalid("to", "is required: the end of the last window (RFC 3339)")
	}
	period, err := schedule.ParsePeriod(req.Window)
	if err != nil {
		return plan, invalid("window", err.Error())
	}
	plan.loc = s.cfg.Zone
	if req.Timezone != "" {
		if plan.loc, err = schedule.LoadZone(req.Timezone); err != nil {
			return plan, invalid("timezone", err.Error())
		}
	}
	plan.maxActive = DefaultMaxActive
	if req.MaxActive != nil {
		if plan.maxActive = *req.MaxActive; plan.maxActive < 1 || plan.maxActive > MaxMaxActive {
			return plan, invalid("max_active", fmt.Sprintf("%d is outside 1..%d", plan.maxActive, MaxMaxActive))
		}
	}
	if req.Pool != "" {
		if err := pool.Validate(req.Pool); err != nil {
			return plan, invalid("pool", err.Error())
		}
	}
	if plan.windows, err = schedule.Windows(req.From, req.To, period, plan.loc); err != nil {
		field := "window"
		if !req.From.Before(req.To) {
			field = "to"
		}
		return plan, invalid(field, err.Error())
	}
	plan.id, err = backfillID(req, plan.loc, plan.maxActive)
	return plan, err
}

// startBackfill submits one run per window of plan.
func (s *Service) startBackfill(ctx context.Context, p runs.Principal, req BackfillRequest, plan backfillPlan) (*Backfill, error) {
	out := &Backfill{ID: plan.id, Runs: make([]BackfillRun, 0, len(plan.windows))}
	for _, w := range plan.windows {
		start := w.Start.UTC()
		window := &execute.Window{Start: start, End: w.End.UTC()}
		key := "backfill:" + start.Format("2006-01-02T15:04:05Z")
		labels := map[string]string{BackfillLabel: plan.id}
		var res runs.SubmitResult
		var err error
		if req.Template != "" {
			res, err = s.deps.Templates.Run(ctx, p, req.Template, templates.RunRequest{
				Params: req.Params, Pool: req.Pool, Labels: labels, RunKey: key, TriggerKind: run.TriggerBackfill,
				Logical: &start, Zone: plan.loc, Serial: true, MaxActive: plan.maxActive, Backfill: window,
			})
		} else {
			res, err = s.deps.Runs.Submit(ctx, runs.SubmitRequest{
				Principal: p, TriggerKind: string(run.TriggerBackfill), Config: req.Config, Labels: labels,
				Pool: req.Pool, RunKey: key, Clock: &start, Zone: plan.loc, Serial: true, MaxActive: plan.maxActive,
				Backfill: window,
			})
		}
		if err != nil {
			// The windows before this one have their runs; posting again fills the rest.
			return nil, fmt.Errorf("backfill window %s: %w", key, err)
		}
		out.Runs = append(out.Runs, BackfillRun{RunID: res.RunID, Start: w.Start, End: w.End, Replayed: res.Replayed})
	}
	s.deps.Log.InfoContext(ctx, "backfill posted", "backfill_id", plan.id, "windows", len(plan.windows),
		"template", req.Template, "max_active", plan.maxActive, "principal", p.Name)
	s.audit(ctx, p, ActionBackfillPosted, backfillDetails(req, out, plan.maxActive))
	return out, nil
}

// backfillID names a backfill by what it asks for, so a re-post answers the same id.
func backfillID(req BackfillRequest, loc *time.Location, maxActive int) (string, error) {
	raw, err := json.Marshal(struct {
		Template  string            `json:"template"`
		Config    []byte            `json:"config"`
		Params    map[string]string `json:"params"`
		From, To  time.Time
		Window    string `json:"window"`
		Zone      string `json:"zone"`
		Pool      string `json:"pool"`
		MaxActive int    `json:"max_active"`
	}{req.Template, req.Config, req.Params, req.From.UTC(), req.To.UTC(), req.Window, loc.String(), req.Pool, maxActive})
	if err != nil {
		return "", fmt.Errorf("backfill id: %w", err)
	}
	sum := sha256.Sum256(raw)
	return "bf-" + hex.EncodeToString(sum[:12]), nil
}
