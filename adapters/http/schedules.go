package http

import (
	"context"
	"encoding/json"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
)

// ScheduleService is what the schedule handlers need from application/scheduling.
type ScheduleService interface {
	Preview(req scheduling.PreviewRequest) (scheduling.Preview, error)
	Create(ctx context.Context, p runs.Principal, req scheduling.CreateRequest) (*scheduling.View, error)
	Get(ctx context.Context, p runs.Principal, id string) (*scheduling.View, error)
	List(ctx context.Context, p runs.Principal) ([]*scheduling.View, error)
	Pause(ctx context.Context, p runs.Principal, id string) (*scheduling.View, error)
	Resume(ctx context.Context, p runs.Principal, id string) (*scheduling.View, error)
	Delete(ctx context.Context, p runs.Principal, id string) error
	Ticks(ctx context.Context, p runs.Principal, id string, before time.Time, limit int) ([]scheduling.Tick, error)
}

var _ ScheduleService = (*scheduling.Service)(nil)

type scheduleBody struct {
	Cron           string                     `json:"cron"`
	Timezone       string                     `json:"timezone"`
	StartDate      string                     `json:"start_date"`
	Catchup        bool                       `json:"catchup"`
	MaxCatchupRuns *int                       `json:"max_catchup_runs"`
	OverlapPolicy  string                     `json:"overlap_policy"`
	Params         map[string]json.RawMessage `json:"params"`
	Pool           string                     `json:"pool"`
	Labels         map[string]string          `json:"labels"`
}

type previewInstant struct {
	UTC   string `json:"utc"`
	Local string `json:"local"`
	Zone  string `json:"zone"`
}

type previewView struct {
	Cron     string           `json:"cron"`
	Timezone string           `json:"timezone"`
	From     string           `json:"from"`
	Instants []previewInstant `json:"instants"`
}

type scheduleView struct {
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

type tickView struct {
	Instant      string  `json:"instant"`
	Status       string  `json:"status"`
	Reason       *string `json:"reason"`
	RunID        *string `json:"run_id"`
	SummaryCount *int    `json:"summary_count"`
	SummaryFirst *string `json:"summary_first"`
	CreatedAt    string  `json:"created_at"`
}

func toSchedule(v *scheduling.View) scheduleView {
	return scheduleView{
		ID: v.ID, TemplateID: v.TemplateID, Cron: v.Cron, Timezone: v.Timezone, StartDate: optString(v.StartDate),
		Catchup: v.Catchup, MaxCatchupRuns: v.MaxCatchupRuns, OverlapPolicy: v.Overlap, Params: v.Params,
		Pool: optString(v.Pool), Labels: v.Labels, Paused: v.Paused, CreatedBy: v.CreatedBy,
		CreatedAt: formatTime(v.CreatedAt), LastTick: optTime(v.LastTick), NextTick: optTime(v.NextTick),
	}
}

// previewSchedule is GET /v1/schedules/preview.
func (s *server) previewSchedule(c *gin.Context) {
	q := c.Request.URL.Query()
	if err := checkQuery(q, "cron", "timezone", "from", "count"); err != nil {
		s.fail(c, err)
		return
	}
	from, err := queryTime(q, "from")
	if err != nil {
		s.fail(c, err)
		return
	}
	count, err := queryInt(q, "count", scheduling.DefaultPreviewCount, 1, scheduling.MaxPreviewCount)
	if err != nil {
		s.fail(c, err)
		return
	}
	p, err := s.deps.Schedules.Preview(scheduling.PreviewRequest{Cron: q.Get("cron"), Timezone: q.Get("timezone"),
		From: from, Count: int(count)})
	if err != nil {
		s.fail(c, err)
		return
	}
	out := previewView{Cron: p.Cron, Timezone: p.Timezone, From: formatTime(p.From), Instants: []previewInstant{}}
	for _, t := range p.Instants {
		zone, _ := t.Zone()
		out.Instants = append(out.Instants, previewInstant{UTC: formatTime(t), Local: t.Format(time.RFC3339), Zone: zone})
	}
	c.JSON(http.StatusOK, out)
}

// createSchedule is POST /v1/templates/:id/schedules.
func (s *server) createSchedule(c *gin.Context) {
	var b scheduleBody
	if err := s.decodeTemplateBody(c, &b); err != nil {
		s.fail(c, err)
		return
	}
	params, err := paramText(b.Params, "params")
	if err != nil {
		s.fail(c, err)
		return
	}
	v, err := s.deps.Schedules.Create(c.Request.Context(), principal(c), scheduling.CreateRequest{
		TemplateID: c.Param("id"), Cron: b.Cron, Timezone: b.Timezone, StartDate: b.StartDate, Catchup: b.Catchup,
		MaxCatchupRuns: b.MaxCatchupRuns, Overlap: b.OverlapPolicy, Params: params, Pool: b.Pool, Labels: b.Labels,
	})
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Location", "/v1/schedules/"+v.ID)
	c.JSON(http.StatusCreated, toSchedule(v))
}

func (s *server) listSchedules(c *gin.Context) {
	if err := checkQuery(c.Request.URL.Query()); err != nil {
		s.fail(c, err)
		return
	}
	list, err := s.deps.Schedules.List(c.Request.Context(), principal(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]scheduleView, 0, len(list))
	for _, v := range list {
		out = append(out, toSchedule(v))
	}
	c.JSON(http.StatusOK, gin.H{"schedules": out})
}

func (s *server) getSchedule(c *gin.Context) {
	s.answerSchedule(c, func(ctx context.Context, p runs.Principal, id string) (*scheduling.View, error) {
		return s.deps.Schedules.Get(ctx, p, id)
	})
}

func (s *server) pauseSchedule(c *gin.Context) { s.answerSchedule(c, s.deps.Schedules.Pause) }

func (s *server) resumeSchedule(c *gin.Context) { s.answerSchedule(c, s.deps.Schedules.Resume) }

func (s *server) answerSchedule(c *gin.Context, call func(context.Context, runs.Principal, string) (*scheduling.View, error)) {
	if err := checkQuery(c.Request.URL.Query()); err != nil {
		s.fail(c, err)
		return
	}
	v, err := call(c.Request.Context(), principal(c), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, toSchedule(v))
}

func (s *server) deleteSchedule(c *gin.Context) {
	if err := checkQuery(c.Request.URL.Query()); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.deps.Schedules.Delete(c.Request.Context(), principal(c), c.Param("id")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// scheduleTicks is GET /v1/schedules/:id/ticks: newest first, paged by `before`.
func (s *server) scheduleTicks(c *gin.Context) {
	q := c.Request.URL.Query()
	if err := checkQuery(q, "before", "limit"); err != nil {
		s.fail(c, err)
		return
	}
	before, err := queryTime(q, "before")
	if err != nil {
		s.fail(c, err)
		return
	}
	limit, err := queryInt(q, "limit", scheduling.DefaultTickLimit, 1, scheduling.MaxTickLimit)
	if err != nil {
		s.fail(c, err)
		return
	}
	ticks, err := s.deps.Schedules.Ticks(c.Request.Context(), principal(c), c.Param("id"), before, int(limit))
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]tickView, 0, len(ticks))
	for _, t := range ticks {
		v := tickView{Instant: formatTime(t.Instant), Status: string(t.Status), Reason: optString(t.Reason),
			RunID: optString(t.RunID), CreatedAt: formatTime(t.CreatedAt)}
		if t.SummaryCount > 0 {
			n := t.SummaryCount
			v.SummaryCount, v.SummaryFirst = &n, optTime(t.SummaryFirst)
		}
		out = append(out, v)
	}
	var next *string
	if len(ticks) == int(limit) {
		next = optTime(ticks[len(ticks)-1].Instant)
	}
	c.JSON(http.StatusOK, gin.H{"ticks": out, "next_before": next})
}

// withSchedules answers not_found when this server has no schedule service.
func (s *server) withSchedules(h gin.HandlerFunc) gin.HandlerFunc {
	return func(c *gin.Context) {
		if s.deps.Schedules == nil {
			writeError(c, apiErrorf(http.StatusNotFound, codeNotFound, "schedules are not served by this server"))
			return
		}
		h(c)
	}
}
