package client

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
)

// Shard is one shard of a split run (GET /v1/runs/{id}/shards).
type Shard struct {
	Index       int       `json:"index"`
	Status      string    `json:"status"`
	Attempt     int       `json:"attempt"`
	MaxAttempts int       `json:"max_attempts"`
	Owner       *Owner    `json:"owner"`
	Range       *KeyRange `json:"range"`
	Stats       Stats     `json:"stats"`
	Error       *RunError `json:"error"`
	ClaimedAt   *string   `json:"claimed_at"`
	FinishedAt  *string   `json:"finished_at"`
}

// KeyRange is the slice of keys a key-range shard reads.
type KeyRange struct {
	Lo    int64 `json:"lo"`
	Hi    int64 `json:"hi"`
	Nulls bool  `json:"nulls"`
}

// ShardsResponse is one page of shards.
type ShardsResponse struct {
	Shards     []Shard `json:"shards"`
	NextCursor *string `json:"next_cursor"`
}

// ChangeRequest is a proposed run waiting for (or past) another operator's decision.
type ChangeRequest struct {
	ID          string  `json:"id"`
	Proposer    string  `json:"proposer"`
	Tenant      *string `json:"tenant"`
	Name        string  `json:"name"`
	Pool        string  `json:"pool"`
	TriggerKind string  `json:"trigger_kind"`
	Status      string  `json:"status"`
	CreatedAt   string  `json:"created_at"`
	ExpiresAt   string  `json:"expires_at"`
	DecidedBy   *string `json:"decided_by"`
	DecidedAt   *string `json:"decided_at"`
	RunID       *string `json:"run_id"`
}

// ChangeRequestList is one page of GET /v1/change-requests.
type ChangeRequestList struct {
	ChangeRequests []ChangeRequest `json:"change_requests"`
	NextCursor     *string         `json:"next_cursor"`
}

// AuditEntry is one line of the audit log.
type AuditEntry struct {
	At      string         `json:"at"`
	Actor   string         `json:"actor"`
	Action  string         `json:"action"`
	RunID   *string        `json:"run_id"`
	Details map[string]any `json:"details"`
}

// AuditPage is one page of GET /v1/audit, oldest first.
type AuditPage struct {
	Entries   []AuditEntry `json:"entries"`
	NextAfter int64        `json:"next_after"`
}

// Readiness is GET /readyz: the member's health and the cluster it sees.
type Readiness struct {
	Status    string       `json:"status"`
	HistoryOK bool         `json:"history_ok"`
	QueueOK   bool         `json:"queue_ok"`
	Draining  bool         `json:"draining"`
	Cluster   ClusterState `json:"cluster"`
}

// ClusterState lists the live members.
type ClusterState struct {
	Enabled   bool     `json:"enabled"`
	Instances int      `json:"instances"`
	Pools     []string `json:"pools"`
	Members   []Member `json:"members"`
}

// Member is one live member of the cluster.
type Member struct {
	InstanceID    string   `json:"instance_id"`
	Listen        string   `json:"listen"`
	Pools         []string `json:"pools"`
	InFlight      int      `json:"in_flight"`
	MaxConcurrent int      `json:"max_concurrent"`
}

// FanoutRun is one run of a fan-out request.
type FanoutRun struct {
	Params map[string]string `json:"params,omitempty"`
	Labels map[string]string `json:"labels,omitempty"`
}

// FanoutRequest is the body of POST /v1/templates/{id}/fanout.
type FanoutRequest struct {
	Runs []FanoutRun `json:"runs"`
	Pool string      `json:"pool,omitempty"`
}

// FanoutResult is one entry of a fan-out answer: a run, a change request or an error.
type FanoutResult struct {
	RunID           string        `json:"run_id,omitempty"`
	ChangeRequestID string        `json:"change_request_id,omitempty"`
	Status          string        `json:"status,omitempty"`
	Replayed        bool          `json:"replayed,omitempty"`
	Error           *ErrorPayload `json:"error,omitempty"`
}

func runPath(id string, rest ...string) string {
	p := "/v1/runs/" + url.PathEscape(id)
	for _, r := range rest {
		p += "/" + r
	}
	return p
}

// Shards returns one page of a run's shards.
func (c *Client) Shards(ctx context.Context, id, cursor string, limit int) (ShardsResponse, error) {
	q := url.Values{}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out ShardsResponse
	_, err := c.do(ctx, http.MethodGet, runPath(id, "shards"), q, nil, &out)
	return out, err
}

// Rollback starts a rollback run of a completed run; config, when set, replaces the
// stored one (POST /v1/runs/{id}/rollback).
func (c *Client) Rollback(ctx context.Context, id, config string) (SubmitResponse, error) {
	body := map[string]any{}
	if config != "" {
		body["config"] = config
	}
	var out SubmitResponse
	_, err := c.do(ctx, http.MethodPost, runPath(id, "rollback"), nil, body, &out)
	return out, err
}

// ChangeRequests lists change requests, newest first; status "" lists all.
func (c *Client) ChangeRequests(ctx context.Context, status, cursor string, limit int) (ChangeRequestList, error) {
	q := url.Values{}
	if status != "" {
		q.Set("status", status)
	}
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out ChangeRequestList
	_, err := c.do(ctx, http.MethodGet, "/v1/change-requests", q, nil, &out)
	return out, err
}

// ChangeRequest gets one change request: what became of a proposal.
func (c *Client) ChangeRequest(ctx context.Context, id string) (ChangeRequest, error) {
	var out ChangeRequest
	_, err := c.do(ctx, http.MethodGet, "/v1/change-requests/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// Decide approves (approve=true) or rejects a change request.
func (c *Client) Decide(ctx context.Context, id string, approve bool) (ChangeRequest, error) {
	verb := "reject"
	if approve {
		verb = "approve"
	}
	var out ChangeRequest
	_, err := c.do(ctx, http.MethodPost, "/v1/change-requests/"+url.PathEscape(id)+"/"+verb, nil, nil, &out)
	return out, err
}

// Audit returns audit entries after position after (admin only).
func (c *Client) Audit(ctx context.Context, after int64, limit int) (AuditPage, error) {
	q := url.Values{}
	if after > 0 {
		q.Set("after", strconv.FormatInt(after, 10))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out AuditPage
	_, err := c.do(ctx, http.MethodGet, "/v1/audit", q, nil, &out)
	return out, err
}

// Ready returns the member's readiness and the cluster it sees. A 503 (draining, or the
// history unreachable) still carries the body, so it is returned with the error.
func (c *Client) Ready(ctx context.Context) (Readiness, error) {
	var out Readiness
	_, err := c.do(ctx, http.MethodGet, "/readyz", nil, nil, &out)
	return out, err
}

// Template returns the newest version of one template.
func (c *Client) Template(ctx context.Context, id string) (Template, error) {
	var out Template
	_, err := c.do(ctx, http.MethodGet, "/v1/templates/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// DeleteTemplate deletes a template with all its versions.
func (c *Client) DeleteTemplate(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/v1/templates/"+url.PathEscape(id), nil, nil, nil)
	return err
}

// Fanout starts one run per entry of a template in one request.
func (c *Client) Fanout(ctx context.Context, id string, req FanoutRequest) ([]FanoutResult, error) {
	var out struct {
		Runs []FanoutResult `json:"runs"`
	}
	_, err := c.do(ctx, http.MethodPost, "/v1/templates/"+url.PathEscape(id)+"/fanout", nil, req, &out)
	return out.Runs, err
}
