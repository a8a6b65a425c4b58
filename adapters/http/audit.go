package http

import (
	"math"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/sluicehq/sluice/application/runs"
)

const (
	defaultAuditLimit = runs.DefaultAuditLimit
	maxAuditLimit     = runs.MaxAuditLimit
)

type auditEntry struct {
	At      string         `json:"at"`
	Actor   string         `json:"actor"`
	Action  string         `json:"action"`
	RunID   *string        `json:"run_id"`
	Details map[string]any `json:"details"`
}

type auditResponse struct {
	Entries   []auditEntry `json:"entries"`
	NextAfter int64        `json:"next_after"`
}

// audit is GET /v1/audit (admin): entries oldest first, paged by position.
func (s *server) audit(c *gin.Context) {
	q := c.Request.URL.Query()
	if err := checkQuery(q, "after", "limit"); err != nil {
		s.fail(c, err)
		return
	}
	after, err := queryInt(q, "after", 0, 0, math.MaxInt64)
	if err != nil {
		s.fail(c, err)
		return
	}
	limit, err := queryInt(q, "limit", defaultAuditLimit, 1, maxAuditLimit)
	if err != nil {
		s.fail(c, err)
		return
	}
	entries, err := s.deps.Runs.Audit(c.Request.Context(), principal(c), after, int(limit))
	if err != nil {
		s.fail(c, err)
		return
	}
	out := auditResponse{Entries: make([]auditEntry, 0, len(entries)), NextAfter: after}
	for _, e := range entries {
		details := e.Details
		if details == nil {
			details = map[string]any{}
		}
		out.Entries = append(out.Entries, auditEntry{At: formatTime(e.At), Actor: e.Actor, Action: e.Action,
			RunID: optString(e.RunID), Details: details})
		out.NextAfter = max(out.NextAfter, e.Seq)
	}
	c.JSON(http.StatusOK, out)
}
