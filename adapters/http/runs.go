package http

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// List limits (SPEC §2.3): the service's, so both layers refuse the same values.
const (
	defaultListLimit = runs.DefaultListLimit
	maxListLimit     = runs.MaxListLimit
)

type submitResponse struct {
	RunID    string `json:"run_id"`
	Status   string `json:"status"`
	Replayed bool   `json:"replayed,omitempty"`
}

type listResponse struct {
	Runs       []runResource `json:"runs"`
	NextCursor *string       `json:"next_cursor"`
}

type configResponse struct {
	RunID  string `json:"run_id"`
	Config string `json:"config"`
}

type shardsResponse struct {
	Shards     []shardResource `json:"shards"`
	NextCursor *string         `json:"next_cursor"`
}

// submit is POST /v1/runs: a JSON body, or a raw YAML config with options in the query.
func (s *server) submit(c *gin.Context) {
	req, err := submitRequest(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	req.Principal = principal(c)
	req.TriggerKind = string(run.TriggerAPI)
	res, err := s.deps.Runs.Submit(c.Request.Context(), req)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.accepted(c, res)
}

// accepted answers a submission: 202 for a new run, 200 for a replay of an existing one,
// 202 {change_request_id, status: proposed} when it must be approved first (SPEC §9.5).
func (s *server) accepted(c *gin.Context, res runs.SubmitResult) {
	if res.ChangeRequestID != "" {
		c.JSON(http.StatusAccepted, proposedResponse{ChangeRequestID: res.ChangeRequestID, Status: res.Status})
		return
	}
	status := http.StatusAccepted
	if res.Replayed {
		status = http.StatusOK
	}
	c.Header("Location", "/v1/runs/"+res.RunID)
	c.JSON(status, submitResponse{RunID: res.RunID, Status: res.Status, Replayed: res.Replayed})
}

// list is GET /v1/runs.
func (s *server) list(c *gin.Context) {
	f, err := s.listFilter(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	page, err := s.deps.Runs.List(c.Request.Context(), principal(c), f)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := listResponse{Runs: make([]runResource, 0, len(page.Runs))}
	for _, r := range page.Runs {
		out.Runs = append(out.Runs, toResource(r))
	}
	out.NextCursor = optString(page.NextCursor)
	c.JSON(http.StatusOK, out)
}

func (s *server) listFilter(c *gin.Context) (runs.Filter, error) {
	q := c.Request.URL.Query()
	var f runs.Filter
	if err := checkQuery(q, "status", "name", "pool", "tenant", "run_key", "label", "since", "until", "limit", "cursor"); err != nil {
		return f, err
	}
	for _, v := range q["status"] {
		for _, st := range strings.Split(v, ",") {
			parsed, err := run.ParseStatus(strings.TrimSpace(st))
			if err != nil {
				return f, invalidBody("query parameter \"status\": %s", err.Error())
			}
			f.Status = append(f.Status, string(parsed))
		}
	}
	f.Name, f.Pool, f.RunKey = q.Get("name"), q.Get("pool"), q.Get("run_key")
	if _, ok := q["tenant"]; ok {
		f.Tenant, f.TenantSet = q.Get("tenant"), true
	}
	if p := principal(c); p.Tenant != "" {
		if f.TenantSet && f.Tenant != p.Tenant {
			return f, apiErrorf(http.StatusForbidden, codeForbidden,
				"principal %q belongs to tenant %q and may not list tenant %q's runs", p.Name, p.Tenant, f.Tenant)
		}
		f.Tenant, f.TenantSet = p.Tenant, true
	}
	var err error
	if f.Labels, err = parseLabels(q["label"], "query parameter label", run.MaxLabelFilters); err != nil {
		return f, err
	}
	if f.Since, err = queryTime(q, "since"); err != nil {
		return f, err
	}
	if f.Until, err = queryTime(q, "until"); err != nil {
		return f, err
	}
	if !f.Since.IsZero() && !f.Until.IsZero() && !f.Until.After(f.Since) {
		return f, invalidBody("query parameter \"until\" must be after \"since\"")
	}
	limit, err := queryInt(q, "limit", defaultListLimit, 1, maxListLimit)
	if err != nil {
		return f, err
	}
	f.Limit = int(limit)
	// The cursor is the service's own opaque token; it checks and decodes it.
	f.Cursor = q.Get("cursor")
	return f, nil
}

// record loads a run the caller may see. A tenant principal asking for another tenant's
// run is told it does not exist, as the service would, so ids cannot be probed.
func (s *server) record(c *gin.Context) (*runs.Record, error) {
	p := principal(c)
	rec, err := s.deps.Runs.Get(c.Request.Context(), p, c.Param("id"))
	if err != nil {
		return nil, err
	}
	if p.Tenant != "" && rec.Tenant != p.Tenant {
		return nil, apiErrorf(http.StatusNotFound, codeNotFound, "run %s not found", c.Param("id"))
	}
	return rec, nil
}

// get is GET /v1/runs/{id}.
func (s *server) get(c *gin.Context) {
	if err := checkQuery(c.Request.URL.Query()); err != nil {
		s.fail(c, err)
		return
	}
	rec, err := s.record(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, toResource(rec))
}

// shards is GET /v1/runs/{id}/shards: a run's shards by index, each with its status,
// owner, key range and counters (an empty page for a run that was never split).
func (s *server) shards(c *gin.Context) {
	q := c.Request.URL.Query()
	if err := checkQuery(q, "limit", "cursor"); err != nil {
		s.fail(c, err)
		return
	}
	limit, err := queryInt(q, "limit", defaultListLimit, 1, maxListLimit)
	if err != nil {
		s.fail(c, err)
		return
	}
	rec, err := s.record(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	page, err := s.deps.Runs.Shards(c.Request.Context(), principal(c), rec.ID, q.Get("cursor"), int(limit))
	if err != nil {
		s.fail(c, err)
		return
	}
	out := shardsResponse{Shards: make([]shardResource, 0, len(page.Shards)), NextCursor: optString(page.NextCursor)}
	for _, sh := range page.Shards {
		out.Shards = append(out.Shards, toShardResource(sh))
	}
	c.JSON(http.StatusOK, out)
}

// config is GET /v1/runs/{id}/config: the stored config, redacted by the service.
func (s *server) config(c *gin.Context) {
	if err := checkQuery(c.Request.URL.Query()); err != nil {
		s.fail(c, err)
		return
	}
	text, err := s.deps.Runs.Config(c.Request.Context(), principal(c), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, configResponse{RunID: c.Param("id"), Config: text})
}

// cancel is POST /v1/runs/{id}/cancel: 200 with the final state when the run ended at
// once (or had already ended), 202 when a running run was signalled.
func (s *server) cancel(c *gin.Context) {
	if err := s.noBody(c); err != nil {
		s.fail(c, err)
		return
	}
	rec, immediate, err := s.deps.Runs.Cancel(c.Request.Context(), principal(c), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	status := http.StatusAccepted
	if immediate {
		status = http.StatusOK
	}
	c.JSON(status, toResource(rec))
}

// rollback is POST /v1/runs/{id}/rollback.
func (s *server) rollback(c *gin.Context) {
	cfg, err := rollbackConfig(c)
	if err != nil {
		s.fail(c, err)
		return
	}
	res, err := s.deps.Runs.Rollback(c.Request.Context(), principal(c), c.Param("id"), cfg)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.accepted(c, res)
}

// delete is DELETE /v1/runs/{id}: terminal runs only.
func (s *server) delete(c *gin.Context) {
	if err := s.noBody(c); err != nil {
		s.fail(c, err)
		return
	}
	if err := s.deps.Runs.Delete(c.Request.Context(), principal(c), c.Param("id")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// noBody refuses query parameters and any non-empty body (an empty JSON object is fine),
// for routes that take neither.
func (s *server) noBody(c *gin.Context) error {
	if err := checkQuery(c.Request.URL.Query()); err != nil {
		return err
	}
	var empty struct{}
	return decodeJSON(c, &empty, true)
}
