package http

import (
	"context"
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/sluicehq/sluice/application/approvals"
	"github.com/sluicehq/sluice/application/runs"
)

// ApprovalService is what the change-request routes need from application/approvals.
type ApprovalService interface {
	List(ctx context.Context, p runs.Principal, f approvals.Filter) ([]*approvals.ChangeRequest, error)
	Get(ctx context.Context, p runs.Principal, id string) (*approvals.ChangeRequest, error)
	Approve(ctx context.Context, p runs.Principal, id string) (*approvals.ChangeRequest, error)
	Reject(ctx context.Context, p runs.Principal, id string) (*approvals.ChangeRequest, error)
}

type proposedResponse struct {
	ChangeRequestID string `json:"change_request_id"`
	Status          string `json:"status"`
}

// listChangeRequests is GET /v1/change-requests: newest first, ?status=, ?limit=,
// ?cursor= (the id of the last one of the previous page).
func (s *server) listChangeRequests(c *gin.Context) {
	q := c.Request.URL.Query()
	if err := checkQuery(q, "status", "limit", "cursor"); err != nil {
		s.fail(c, err)
		return
	}
	var f approvals.Filter
	if v := q.Get("status"); v != "" {
		st, err := approvals.ParseStatus(v)
		if err != nil {
			s.fail(c, invalidBody("query parameter \"status\": %s", err.Error()))
			return
		}
		f.Status = st
	}
	limit, err := queryInt(q, "limit", approvals.DefaultListLimit, 1, approvals.MaxListLimit)
	if err != nil {
		s.fail(c, err)
		return
	}
	f.Limit, f.After = int(limit), q.Get("cursor")
	list, err := s.deps.Approvals.List(c.Request.Context(), principal(c), f)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, approvals.NewListView(list, f.Limit))
}

// getChangeRequest is GET /v1/change-requests/{id}: what became of one proposal.
func (s *server) getChangeRequest(c *gin.Context) {
	cr, err := s.deps.Approvals.Get(c.Request.Context(), principal(c), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, approvals.NewView(cr))
}

// approveChangeRequest is POST /v1/change-requests/{id}/approve: the run is created.
func (s *server) approveChangeRequest(c *gin.Context) {
	s.decide(c, s.deps.Approvals.Approve)
}

// rejectChangeRequest is POST /v1/change-requests/{id}/reject.
func (s *server) rejectChangeRequest(c *gin.Context) {
	s.decide(c, s.deps.Approvals.Reject)
}

func (s *server) decide(c *gin.Context, decide func(context.Context, runs.Principal, string) (*approvals.ChangeRequest, error)) {
	if err := s.noBody(c); err != nil {
		s.fail(c, err)
		return
	}
	cr, err := decide(c.Request.Context(), principal(c), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, approvals.NewView(cr))
}

// withApprovals answers not_found when this server records no change requests.
func (s *server) withApprovals(h gin.HandlerFunc) gin.HandlerFunc {
	return servedBy(s.deps.Approvals != nil, "change requests", h)
}
