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

// BackfillService is what POST /v1/backfill needs from application/scheduling.
type BackfillService interface {
	Backfill(ctx context.Context, p runs.Principal, req scheduling.BackfillRequest) (*scheduling.Backfill, error)
}

var _ BackfillService = (*scheduling.Service)(nil)

type backfillBody struct {
	Template  string                     `json:"template"`
	Config    json.RawMessage            `json:"config"`
	Params    map[string]json.RawMessage `json:"params"`
	From      string                     `json:"from"`
	To        string                     `json:"to"`
	Window    string                     `json:"window"`
	Timezone  string                     `json:"timezone"`
	Pool      string                     `json:"pool"`
	MaxActive *int                       `json:"max_active"`
}

type backfillRunView struct {
	RunID string `json:"run_id"`
	Start string `json:"start"`
	End   string `json:"end"`
}

// backfill is POST /v1/backfill: 202 with one run per window (SPEC §9.4), or with the
// one change request that will create them under --require-approval run (SPEC §9.5).
func (s *server) backfill(c *gin.Context) {
	var b backfillBody
	if err := s.decodeTemplateBody(c, &b); err != nil {
		s.fail(c, err)
		return
	}
	req := scheduling.BackfillRequest{Template: b.Template, Window: b.Window, Timezone: b.Timezone, Pool: b.Pool,
		MaxActive: b.MaxActive}
	var err error
	if len(b.Config) > 0 && string(b.Config) != "null" {
		if req.Config, err = configText(b.Config, "config"); err != nil {
			s.fail(c, err)
			return
		}
	}
	if req.Params, err = paramText(b.Params, "params"); err != nil {
		s.fail(c, err)
		return
	}
	for field, v := range map[string]struct {
		text string
		into *time.Time
	}{"from": {b.From, &req.From}, "to": {b.To, &req.To}} {
		if v.text == "" {
			continue // the service names the missing field
		}
		if *v.into, err = time.Parse(time.RFC3339Nano, v.text); err != nil {
			s.fail(c, invalidBody("field %q must be an RFC 3339 time like 2026-03-01T00:00:00Z, not %q", field, v.text))
			return
		}
	}
	bf, err := s.deps.Backfills.Backfill(c.Request.Context(), principal(c), req)
	if err != nil {
		s.fail(c, err)
		return
	}
	if bf.ChangeRequestID != "" {
		// --require-approval run: the whole backfill waits as one change request.
		c.JSON(http.StatusAccepted, gin.H{"backfill_id": bf.ID, "change_request_id": bf.ChangeRequestID, "status": "proposed"})
		return
	}
	out := make([]backfillRunView, 0, len(bf.Runs))
	for _, r := range bf.Runs {
		out = append(out, backfillRunView{RunID: r.RunID, Start: formatTime(r.Start), End: formatTime(r.End)})
	}
	c.JSON(http.StatusAccepted, gin.H{"backfill_id": bf.ID, "runs": out})
}

// withBackfills answers not_found when this server has no backfill service.
func (s *server) withBackfills(h gin.HandlerFunc) gin.HandlerFunc {
	return func(c *gin.Context) {
		if s.deps.Backfills == nil {
			writeError(c, apiErrorf(http.StatusNotFound, codeNotFound, "backfills are not served by this server"))
			return
		}
		h(c)
	}
}
