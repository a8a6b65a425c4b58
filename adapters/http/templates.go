package http

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/pool"
)

// TemplateService is what the template handlers need from application/templates.
type TemplateService interface {
	Register(ctx context.Context, p runs.Principal, req templates.RegisterRequest) (*templates.View, error)
	Get(ctx context.Context, p runs.Principal, id string) (*templates.View, error)
	List(ctx context.Context, p runs.Principal) ([]*templates.View, error)
	Delete(ctx context.Context, p runs.Principal, id string) error
	Run(ctx context.Context, p runs.Principal, id string, req templates.RunRequest) (runs.SubmitResult, error)
	Fanout(ctx context.Context, p runs.Principal, id, pool string, entries []templates.FanoutEntry) ([]templates.FanoutResult, error)
}

var _ TemplateService = (*templates.Service)(nil)

type registerBody struct {
	ID           string          `json:"id"`
	Config       json.RawMessage `json:"config"`
	Pool         string          `json:"pool"`
	PoolOverride json.RawMessage `json:"pool_override"`
	Tenants      json.RawMessage `json:"tenants"`
}

type templateRunBody struct {
	Params         map[string]json.RawMessage `json:"params"`
	Pool           string                     `json:"pool"`
	Labels         map[string]string          `json:"labels"`
	IdempotencyKey string                     `json:"idempotency_key"`
	RunKey         string                     `json:"run_key"`
	Callback       *callbackBody              `json:"callback"`
}

type fanoutBody struct {
	Runs []struct {
		Params map[string]json.RawMessage `json:"params"`
		Labels map[string]string          `json:"labels"`
	} `json:"runs"`
	Pool string `json:"pool"`
}

type paramView struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Required    bool   `json:"required"`
	Default     any    `json:"default"`
	Secret      bool   `json:"secret"`
	Description string `json:"description,omitempty"`
	// The constraints of SPEC §14.2 (max_length is the effective bound of a string).
	Enum      []any  `json:"enum,omitempty"`
	Pattern   string `json:"pattern,omitempty"`
	Min       any    `json:"min,omitempty"`
	Max       any    `json:"max,omitempty"`
	MaxLength int    `json:"max_length,omitempty"`
}

type templateView struct {
	ID           string      `json:"id"`
	Version      int         `json:"version"`
	Pool         *string     `json:"pool"`
	PoolOverride any         `json:"pool_override"`
	Tenants      any         `json:"tenants"`
	Params       []paramView `json:"params"`
	CreatedBy    string      `json:"created_by"`
	CreatedAt    string      `json:"created_at"`
}

func toTemplate(v *templates.View) templateView {
	out := templateView{ID: v.ID, Version: v.Version, Pool: optString(v.Pool), Params: []paramView{},
		CreatedBy: v.CreatedBy, CreatedAt: v.CreatedAt.UTC().Format(time.RFC3339Nano)}
	switch {
	case v.PoolOverride.Any:
		out.PoolOverride = true
	case len(v.PoolOverride.Allowed) > 0:
		out.PoolOverride = v.PoolOverride.Allowed
	default:
		out.PoolOverride = false
	}
	switch {
	case v.AllTenants:
		out.Tenants = "*"
	case len(v.Tenants) > 0:
		out.Tenants = v.Tenants
	default:
		out.Tenants = []string{}
	}
	for _, p := range v.Params {
		out.Params = append(out.Params, paramView(templates.ShowParam(p)))
	}
	return out
}

// registerTemplate is POST /v1/templates.
func (s *server) registerTemplate(c *gin.Context) {
	var b registerBody
	if err := s.decodeTemplateBody(c, &b); err != nil {
		s.fail(c, err)
		return
	}
	text, err := configText(b.Config, "config")
	if err != nil {
		s.fail(c, err)
		return
	}
	req := templates.RegisterRequest{ID: b.ID, Config: text, Pool: b.Pool}
	if req.PoolOverride, err = parseOverride(b.PoolOverride); err != nil {
		s.fail(c, err)
		return
	}
	if req.Tenants, req.AllTenants, err = parseTenants(b.Tenants); err != nil {
		s.fail(c, err)
		return
	}
	v, err := s.deps.Templates.Register(c.Request.Context(), principal(c), req)
	if err != nil {
		s.fail(c, err)
		return
	}
	c.Header("Location", "/v1/templates/"+v.ID)
	c.JSON(http.StatusCreated, toTemplate(v))
}

func (s *server) decodeTemplateBody(c *gin.Context, into any) error {
	if err := checkQuery(c.Request.URL.Query()); err != nil {
		return err
	}
	body, err := readBody(c)
	if err != nil {
		return err
	}
	return decodeJSONBytes(body, into, false)
}

func parseOverride(raw json.RawMessage) (pool.Override, error) {
	if len(raw) == 0 || string(raw) == "null" || string(raw) == "false" {
		return pool.Override{}, nil
	}
	if string(raw) == "true" {
		return pool.Override{Any: true}, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return pool.Override{}, invalidBody("field \"pool_override\" must be true, false or a list of pools")
	}
	return pool.Override{Allowed: list}, nil
}

func parseTenants(raw json.RawMessage) ([]string, bool, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, false, nil
	}
	if string(raw) == `"*"` {
		return nil, true, nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, false, invalidBody("field \"tenants\" must be \"*\" or a list of tenant names")
	}
	return list, false, nil
}

// paramText turns JSON param values into the text the binder parses by type.
func paramText(in map[string]json.RawMessage, field string) (map[string]string, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(in))
	for k, raw := range in {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil {
			return nil, invalidBody("field %q: %s", field+"."+k, err.Error())
		}
		switch x := v.(type) {
		case string:
			out[k] = x
		case bool:
			out[k] = strconv.FormatBool(x)
		case float64:
			out[k] = string(raw) // as written: 10 stays 10, not 1e+01
		default:
			return nil, invalidBody("field %q must be a string, number or boolean", field+"."+k)
		}
	}
	return out, nil
}

func (s *server) listTemplates(c *gin.Context) {
	list, err := s.deps.Templates.List(c.Request.Context(), principal(c))
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]templateView, 0, len(list))
	for _, v := range list {
		out = append(out, toTemplate(v))
	}
	c.JSON(http.StatusOK, gin.H{"templates": out})
}

func (s *server) getTemplate(c *gin.Context) {
	v, err := s.deps.Templates.Get(c.Request.Context(), principal(c), c.Param("id"))
	if err != nil {
		s.fail(c, err)
		return
	}
	c.JSON(http.StatusOK, toTemplate(v))
}

func (s *server) deleteTemplate(c *gin.Context) {
	if err := s.deps.Templates.Delete(c.Request.Context(), principal(c), c.Param("id")); err != nil {
		s.fail(c, err)
		return
	}
	c.Status(http.StatusNoContent)
}

// runTemplate is POST /v1/templates/:id/runs and POST /v1/tenants/:tenant/templates/:id/runs.
func (s *server) runTemplate(c *gin.Context) {
	var b templateRunBody
	if err := s.decodeTemplateBody(c, &b); err != nil {
		s.fail(c, err)
		return
	}
	params, err := paramText(b.Params, "params")
	if err != nil {
		s.fail(c, err)
		return
	}
	req := templates.RunRequest{Tenant: c.Param("tenant"), Params: params, Pool: b.Pool, Labels: b.Labels,
		IdempotencyKey: b.IdempotencyKey, RunKey: b.RunKey}
	if b.Callback != nil {
		req.Callback = &runs.Callback{URL: b.Callback.URL, On: b.Callback.On, ExtraFields: b.Callback.ExtraFields}
	}
	res, err := s.deps.Templates.Run(c.Request.Context(), principal(c), c.Param("id"), req)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.accepted(c, res)
}

// fanout is POST /v1/templates/:id/fanout: one answer per entry, in order.
func (s *server) fanout(c *gin.Context) {
	var b fanoutBody
	if err := s.decodeTemplateBody(c, &b); err != nil {
		s.fail(c, err)
		return
	}
	entries := make([]templates.FanoutEntry, 0, len(b.Runs))
	for i, r := range b.Runs {
		params, err := paramText(r.Params, fmt.Sprintf("runs[%d].params", i))
		if err != nil {
			s.fail(c, err)
			return
		}
		entries = append(entries, templates.FanoutEntry{Params: params, Labels: r.Labels})
	}
	results, err := s.deps.Templates.Fanout(c.Request.Context(), principal(c), c.Param("id"), b.Pool, entries)
	if err != nil {
		s.fail(c, err)
		return
	}
	out := make([]gin.H, 0, len(results))
	for _, r := range results {
		if r.Err != nil {
			ae, _ := classify(r.Err)
			out = append(out, gin.H{"error": gin.H{"code": ae.code, "message": ae.message}})
			continue
		}
		if r.ChangeRequestID != "" {
			out = append(out, gin.H{"change_request_id": r.ChangeRequestID, "status": r.Status})
			continue
		}
		out = append(out, gin.H{"run_id": r.RunID, "status": r.Status, "replayed": r.Replayed})
	}
	c.JSON(http.StatusAccepted, gin.H{"runs": out})
}

// withTemplates answers not_found when this server has no template service.
func (s *server) withTemplates(h gin.HandlerFunc) gin.HandlerFunc {
	return servedBy(s.deps.Templates != nil, "templates", h)
}

// servedBy answers not_found on a route whose service this server was built without.
func servedBy(served bool, what string, h gin.HandlerFunc) gin.HandlerFunc {
	if served {
		return h
	}
	return func(c *gin.Context) {
		writeError(c, apiErrorf(http.StatusNotFound, codeNotFound, "%s are not served by this server", what))
	}
}
