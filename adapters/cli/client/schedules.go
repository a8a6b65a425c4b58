package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// ScheduleRequest is the body of POST /v1/templates/{id}/schedules.
type ScheduleRequest struct {
	Cron           string            `json:"cron"`
	Timezone       string            `json:"timezone,omitempty"`
	StartDate      string            `json:"start_date,omitempty"`
	Catchup        bool              `json:"catchup,omitempty"`
	MaxCatchupRuns int               `json:"max_catchup_runs,omitempty"`
	OverlapPolicy  string            `json:"overlap_policy,omitempty"`
	Params         map[string]string `json:"params,omitempty"`
	Pool           string            `json:"pool,omitempty"`
	Labels         map[string]string `json:"labels,omitempty"`
}

// Schedule is a schedule as the API shows it (secret param values read "(secret)").
type Schedule struct {
	ID             string            `json:"id"`
	TemplateID     string            `json:"template_id"`
	Cron           string            `json:"cron"`
	Timezone       string            `json:"timezone"`
	StartDate      *string           `json:"start_date"`
	Catchup        bool              `json:"catchup"`
	MaxCatchupRuns int               `json:"max_catchup_runs"`
	OverlapPolicy  string            `json:"overlap_policy"`
	Params         map[string]string `json:"params"`
	Pool           *string           `json:"pool"`
	Labels         map[string]string `json:"labels"`
	Paused         bool              `json:"paused"`
	CreatedBy      string            `json:"created_by"`
	CreatedAt      string            `json:"created_at"`
	LastTick       *string           `json:"last_tick"`
	NextTick       *string           `json:"next_tick"`
}

// Tick is one recorded tick of a schedule.
type Tick struct {
	Instant      string  `json:"instant"`
	Status       string  `json:"status"`
	Reason       *string `json:"reason"`
	RunID        *string `json:"run_id"`
	SummaryCount *int    `json:"summary_count"`
	SummaryFirst *string `json:"summary_first"`
	CreatedAt    string  `json:"created_at"`
}

// TicksResponse is one page of GET /v1/schedules/{id}/ticks.
type TicksResponse struct {
	Ticks      []Tick  `json:"ticks"`
	NextBefore *string `json:"next_before"`
}

// BackfillRequest is the body of POST /v1/backfill.
type BackfillRequest struct {
	Template  string            `json:"template,omitempty"`
	Config    string            `json:"config,omitempty"`
	Params    map[string]string `json:"params,omitempty"`
	From      string            `json:"from"`
	To        string            `json:"to"`
	Window    string            `json:"window"`
	Timezone  string            `json:"timezone,omitempty"`
	Pool      string            `json:"pool,omitempty"`
	MaxActive int               `json:"max_active,omitempty"`
}

// BackfillRun is one window's run.
type BackfillRun struct {
	RunID string `json:"run_id"`
	Start string `json:"start"`
	End   string `json:"end"`
}

// BackfillResponse is the answer of POST /v1/backfill.
type BackfillResponse struct {
	BackfillID string        `json:"backfill_id"`
	Runs       []BackfillRun `json:"runs,omitempty"`
	// ChangeRequestID and Status (proposed) answer a backfill that waits for approval
	// (--require-approval run): no run exists yet.
	ChangeRequestID string `json:"change_request_id,omitempty"`
	Status          string `json:"status,omitempty"`
}

// CreateSchedule creates a schedule on a template.
func (c *Client) CreateSchedule(ctx context.Context, template string, req ScheduleRequest) (Schedule, error) {
	var out Schedule
	_, err := c.do(ctx, http.MethodPost, "/v1/templates/"+url.PathEscape(template)+"/schedules", nil, req, &out)
	return out, err
}

// ListSchedules lists every schedule, oldest first.
func (c *Client) ListSchedules(ctx context.Context) ([]Schedule, error) {
	var out struct {
		Schedules []Schedule `json:"schedules"`
	}
	_, err := c.do(ctx, http.MethodGet, "/v1/schedules", nil, nil, &out)
	return out.Schedules, err
}

// GetSchedule reads one schedule, with its last and next tick.
func (c *Client) GetSchedule(ctx context.Context, id string) (Schedule, error) {
	var out Schedule
	_, err := c.do(ctx, http.MethodGet, "/v1/schedules/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// SetSchedulePaused pauses or resumes a schedule.
func (c *Client) SetSchedulePaused(ctx context.Context, id string, paused bool) (Schedule, error) {
	verb := "resume"
	if paused {
		verb = "pause"
	}
	var out Schedule
	_, err := c.do(ctx, http.MethodPost, "/v1/schedules/"+url.PathEscape(id)+"/"+verb, nil, nil, &out)
	return out, err
}

// DeleteSchedule deletes a schedule and its ticks.
func (c *Client) DeleteSchedule(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/v1/schedules/"+url.PathEscape(id), nil, nil, nil)
	return err
}

// ScheduleTicks reads one page of a schedule's ticks, newest first; before "" starts at
// the newest.
func (c *Client) ScheduleTicks(ctx context.Context, id, before string, limit int) (TicksResponse, error) {
	q := url.Values{}
	if before != "" {
		q.Set("before", before)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out TicksResponse
	_, err := c.do(ctx, http.MethodGet, "/v1/schedules/"+url.PathEscape(id)+"/ticks", q, nil, &out)
	return out, err
}

// Backfill posts a backfill.
func (c *Client) Backfill(ctx context.Context, req BackfillRequest) (BackfillResponse, error) {
	var out BackfillResponse
	_, err := c.do(ctx, http.MethodPost, "/v1/backfill", nil, req, &out)
	return out, err
}
