package client

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client talks to one sluice server. The zero HTTP uses http.DefaultClient; a client with
// a Timeout would cut followed log streams, so set one only if you never follow.
type Client struct {
	BaseURL string
	Token   string
	HTTP    *http.Client
}

// ErrUnreachable wraps a failure to connect to (or hear from) the server at all, as
// opposed to an answer refusing the request.
var ErrUnreachable = errors.New("cannot reach the server")

// Error is an error answer of the server: its HTTP status and the stable code and message
// of the body. Transport failures are other errors.
type Error struct {
	Status  int
	Code    string
	Message string
	Details map[string]any
	// RequestID finds the request's lines in the server log.
	RequestID string
}

func (e *Error) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("server answered %d: %s", e.Status, e.Message)
	}
	return e.Code + ": " + e.Message
}

// FieldErrors returns details.errors of an invalid_config answer.
func (e *Error) FieldErrors() []FieldError {
	list, _ := e.Details["errors"].([]any)
	out := make([]FieldError, 0, len(list))
	for _, item := range list {
		m, _ := item.(map[string]any)
		fe := FieldError{}
		fe.Path, _ = m["path"].(string)
		fe.Message, _ = m["message"].(string)
		if v, ok := m["line"].(float64); ok {
			fe.Line = int(v)
		}
		if v, ok := m["column"].(float64); ok {
			fe.Column = int(v)
		}
		out = append(out, fe)
	}
	return out
}

// FieldError is one problem of an invalid config.
type FieldError struct {
	Path    string
	Message string
	Line    int
	Column  int
}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return http.DefaultClient
}

// do sends a request and decodes a 2xx JSON answer into out (when non-nil). It returns
// the status so callers can tell 200 from 202.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body, out any) (int, error) {
	resp, err := c.send(ctx, method, path, q, body, "application/json")
	if err != nil {
		return 0, err
	}
	defer func() { _ = resp.Body.Close() }()
	if out != nil && resp.StatusCode != http.StatusNoContent {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			return resp.StatusCode, fmt.Errorf("%s %s: the answer is not the expected JSON: %w", method, path, err)
		}
	}
	return resp.StatusCode, nil
}

// send returns a 2xx response (the caller closes it) or an *Error.
func (c *Client) send(ctx context.Context, method, path string, q url.Values, body any, accept string) (*http.Response, error) {
	base, err := url.Parse(strings.TrimRight(c.BaseURL, "/"))
	if err != nil || base.Scheme == "" || base.Host == "" {
		return nil, fmt.Errorf("server address %q is not a URL like http://127.0.0.1:8080", redactURL(c.BaseURL))
	}
	u := base.JoinPath(path)
	u.RawQuery = q.Encode()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", accept)
	if c.Token != "" {
		req.Header.Set("Authorization", "Bearer "+c.Token)
	}
	resp, err := c.http().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w at %s: %w", ErrUnreachable, redactURL(base.String()), unwrapURLError(err))
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return resp, nil
	}
	defer func() { _ = resp.Body.Close() }()
	return nil, decodeError(resp)
}

func decodeError(resp *http.Response) error {
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	var eb ErrorBody
	if err := json.Unmarshal(raw, &eb); err != nil || eb.Error.Code == "" {
		msg := strings.TrimSpace(string(raw))
		if msg == "" {
			msg = http.StatusText(resp.StatusCode)
		}
		return &Error{Status: resp.StatusCode, Message: msg}
	}
	return &Error{Status: resp.StatusCode, Code: eb.Error.Code, Message: eb.Error.Message, Details: eb.Error.Details,
		RequestID: eb.Error.RequestID}
}

// unwrapURLError drops the *url.Error wrapper, whose text repeats the full URL.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// redactURL hides userinfo, should someone put credentials into --server.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.User == nil {
		return s
	}
	u.User = url.User("REDACTED")
	return u.String()
}

// Submit creates a run (POST /v1/runs).
func (c *Client) Submit(ctx context.Context, req SubmitRequest) (SubmitResponse, error) {
	var out SubmitResponse
	_, err := c.do(ctx, http.MethodPost, "/v1/runs", nil, req, &out)
	return out, err
}

// ListOptions are the filters of GET /v1/runs; zero values don't filter.
type ListOptions struct {
	Status []string
	Name   string
	Pool   string
	Tenant string
	RunKey string
	Labels map[string]string
	Since  time.Time
	Until  time.Time
	Limit  int
	Cursor string
}

func (o ListOptions) query() url.Values {
	q := url.Values{}
	if len(o.Status) > 0 {
		q.Set("status", strings.Join(o.Status, ","))
	}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("name", o.Name)
	set("pool", o.Pool)
	set("tenant", o.Tenant)
	set("run_key", o.RunKey)
	set("cursor", o.Cursor)
	for k, v := range o.Labels {
		q.Add("label", k+"="+v)
	}
	if !o.Since.IsZero() {
		q.Set("since", o.Since.UTC().Format(time.RFC3339Nano))
	}
	if !o.Until.IsZero() {
		q.Set("until", o.Until.UTC().Format(time.RFC3339Nano))
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	return q
}

// List returns one page of runs, newest first.
func (c *Client) List(ctx context.Context, o ListOptions) (ListResponse, error) {
	var out ListResponse
	_, err := c.do(ctx, http.MethodGet, "/v1/runs", o.query(), nil, &out)
	return out, err
}

// Get returns one run.
func (c *Client) Get(ctx context.Context, id string) (RunResource, error) {
	var out RunResource
	_, err := c.do(ctx, http.MethodGet, "/v1/runs/"+url.PathEscape(id), nil, nil, &out)
	return out, err
}

// Cancel cancels a run. ended is true when the answer is final (the run was queued or
// pending, or had already ended); false when a running run was only signalled.
func (c *Client) Cancel(ctx context.Context, id string) (run RunResource, ended bool, err error) {
	status, err := c.do(ctx, http.MethodPost, "/v1/runs/"+url.PathEscape(id)+"/cancel", nil, nil, &run)
	return run, status == http.StatusOK, err
}

// Delete deletes a terminal run.
func (c *Client) Delete(ctx context.Context, id string) error {
	_, err := c.do(ctx, http.MethodDelete, "/v1/runs/"+url.PathEscape(id), nil, nil, nil)
	return err
}

// Config returns a run's stored config, redacted by the server.
func (c *Client) Config(ctx context.Context, id string) (string, error) {
	var out ConfigResponse
	_, err := c.do(ctx, http.MethodGet, "/v1/runs/"+url.PathEscape(id)+"/config", nil, nil, &out)
	return out.Config, err
}

// Logs returns the log lines with seq > after; limit 0 takes the server's default.
func (c *Client) Logs(ctx context.Context, id string, after int64, limit int) (LogsResponse, error) {
	q := url.Values{}
	if after > 0 {
		q.Set("after", strconv.FormatInt(after, 10))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	var out LogsResponse
	_, err := c.do(ctx, http.MethodGet, "/v1/runs/"+url.PathEscape(id)+"/logs", q, nil, &out)
	return out, err
}
