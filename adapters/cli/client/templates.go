package client

import (
	"context"
	"net/http"
	"net/url"
)

// TemplateRequest is the body of POST /v1/templates. PoolOverride is true or a list of
// pools; Tenants a list of names or "*".
type TemplateRequest struct {
	ID           string `json:"id"`
	Config       string `json:"config"`
	Pool         string `json:"pool,omitempty"`
	PoolOverride any    `json:"pool_override,omitempty"`
	Tenants      any    `json:"tenants,omitempty"`
}

// TemplateParam is one declared param of a template.
type TemplateParam struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Required    bool   `json:"required"`
	Default     any    `json:"default"`
	Secret      bool   `json:"secret"`
	Description string `json:"description"`
	Enum        []any  `json:"enum,omitempty"`
	Pattern     string `json:"pattern,omitempty"`
	Min         any    `json:"min,omitempty"`
	Max         any    `json:"max,omitempty"`
	MaxLength   int    `json:"max_length,omitempty"`
}

// Template is a template as the API shows it (never its config).
type Template struct {
	ID           string          `json:"id"`
	Version      int             `json:"version"`
	Pool         *string         `json:"pool"`
	PoolOverride any             `json:"pool_override"`
	Tenants      any             `json:"tenants"`
	Params       []TemplateParam `json:"params"`
	CreatedBy    string          `json:"created_by"`
	CreatedAt    string          `json:"created_at"`
}

// TemplateRunRequest is the body of POST /v1/templates/{id}/runs.
type TemplateRunRequest struct {
	Params         map[string]string `json:"params,omitempty"`
	Pool           string            `json:"pool,omitempty"`
	Labels         map[string]string `json:"labels,omitempty"`
	IdempotencyKey string            `json:"idempotency_key,omitempty"`
	RunKey         string            `json:"run_key,omitempty"`
	Callback       *Callback         `json:"callback,omitempty"`
}

// RegisterTemplate registers a template or its next version (POST /v1/templates).
func (c *Client) RegisterTemplate(ctx context.Context, req TemplateRequest) (Template, error) {
	var out Template
	_, err := c.do(ctx, http.MethodPost, "/v1/templates", nil, req, &out)
	return out, err
}

// ListTemplates lists the newest version of every template (GET /v1/templates).
func (c *Client) ListTemplates(ctx context.Context) ([]Template, error) {
	var out struct {
		Templates []Template `json:"templates"`
	}
	_, err := c.do(ctx, http.MethodGet, "/v1/templates", nil, nil, &out)
	return out.Templates, err
}

// RunTemplate starts a run of a template (POST /v1/templates/{id}/runs, or the tenant
// route when tenant is set).
func (c *Client) RunTemplate(ctx context.Context, id, tenant string, req TemplateRunRequest) (SubmitResponse, error) {
	path := "/v1/templates/" + url.PathEscape(id) + "/runs"
	if tenant != "" {
		path = "/v1/tenants/" + url.PathEscape(tenant) + path[len("/v1"):]
	}
	var out SubmitResponse
	_, err := c.do(ctx, http.MethodPost, path, nil, req, &out)
	return out, err
}
