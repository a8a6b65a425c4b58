package http

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	nethttp "net/http"
	"net/url"
	"strconv"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// Type is the connector's type name.
const Type = "http"

// Pagination types.
const (
	PageNone   = "none"
	PageCursor = "cursor"
	PageOffset = "offset"
	PageNumber = "page"
	PageLink   = "link_header"
)

// maxBody bounds one answer held in memory.
const maxBody = 64 << 20

// Connector is the http source.
type Connector struct {
	client   *nethttp.Client
	checkURL func(context.Context, *url.URL) error
}

// Option configures the connector.
type Option func(*Connector)

// WithHTTPClient sets the client requests are sent with (default: a fresh client).
func WithHTTPClient(c *nethttp.Client) Option { return func(h *Connector) { h.client = c } }

// WithURLCheck installs a policy every requested URL — and every redirect — must pass.
func WithURLCheck(check func(context.Context, *url.URL) error) Option {
	return func(h *Connector) { h.checkURL = check }
}

// New returns the http connector.
func New(opts ...Option) *Connector {
	c := &Connector{}
	for _, o := range opts {
		o(c)
	}
	if c.client == nil {
		c.client = &nethttp.Client{}
	}
	return c
}

var (
	_ execute.SourceConnector = (*Connector)(nil)
	_ execute.Targeter        = (*Connector)(nil)
)

// Spec declares the source's config keys.
func (*Connector) Spec() pipeline.Spec {
	return pipeline.Spec{
		Type:  Type,
		Roles: pipeline.RoleSource,
		Description: "A JSON HTTP API: the records at records_path of each answer, following cursor, offset, page or Link-header " +
			"pagination, rate-limited, incremental through cursor_param; 429 and 5xx answers are retried.",
		Fields: []pipeline.FieldSpec{
			{Name: "url", Type: pipeline.FieldString, Required: true, Description: "The first request's URL (http or https)."},
			{Name: "method", Type: pipeline.FieldString, Default: "GET", Enum: []string{"GET", "POST"},
				Description: "The request method."},
			{Name: "headers", Type: pipeline.FieldObject, Secret: true,
				Description: "Request headers, e.g. {Authorization: \"Bearer ${secret:api_token}\"}; values never appear in errors or logs."},
			{Name: "body", Type: pipeline.FieldString,
				Description: "Request body sent with every request (POST), e.g. a JSON query."},
			{Name: "records_path", Type: pipeline.FieldString, Default: "",
				Description: "Dot path to the array of records in each answer (e.g. data.items); empty: the answer itself is the array."},
			{Name: "pagination", Type: pipeline.FieldObject,
				Description: "{type: none | cursor | offset | page | link_header, …}: cursor: cursor_path (dot path to the next cursor) " +
					"and param (default cursor); offset: param (offset), limit_param (limit), limit (100); page: param (page), start (1), " +
					"size_param and size (optional); link_header follows rel=\"next\". A page with no records ends the read."},
			{Name: "rate_limit_per_sec", Type: pipeline.FieldNumber, Default: float64(0),
				Description: "At most this many requests per second; 0: unlimited."},
			{Name: "cursor_param", Type: pipeline.FieldString,
				Description: "Incremental reads: the query parameter that carries the bookmark (the last value of replication.cursor " +
					"in the records); the API must answer only records whose cursor is greater, in ascending order."},
			cfg.BatchSizeField(),
			{Name: "timeout_secs", Type: pipeline.FieldInt, Default: int64(60), Min: ptr(1),
				Description: "Time limit of one request."},
			retry.Field(),
		},
		Check: func(_ pipeline.Role, c map[string]any, path string) pipeline.Errors {
			var errs pipeline.Errors
			if _, ok := c["url"]; !ok {
				// Missing (reported as required) or holding a directive resolved where the
				// run executes: check the other keys against a stand-in.
				c = maps.Clone(c)
				c["url"] = "http://url.invalid/"
			}
			if _, err := optionsOf(c); err != nil {
				var oe *optionError
				if errors.As(err, &oe) {
					errs = append(errs, pipeline.FieldError{Path: pipeline.Join(path, oe.key), Message: oe.msg})
				}
			}
			return errs
		},
	}
}

func ptr(v int64) *int64 { return &v }

// Targets lists the URL's host, for the submit-time host check (SPEC §14.1).
func (*Connector) Targets(_ pipeline.Role, c map[string]any) []execute.Target {
	raw, _ := c["url"].(string)
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return nil
	}
	port := uint64(80)
	if u.Scheme == "https" {
		port = 443
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.ParseUint(p, 10, 16); err == nil {
			port = n
		}
	}
	return []execute.Target{{Key: "url", Host: u.Hostname(), Port: uint16(port)}}
}

// clientFor is the client a source sends with. Confined, it dials through the Reach, so
// the dial policy judges every address a URL (or a redirect) resolves to, and it never
// uses a proxy, which would dial the target out of the policy's sight.
func (c *Connector) clientFor(reach execute.Reach) *nethttp.Client {
	client := *c.client
	if c.checkURL != nil {
		prev, check := client.CheckRedirect, c.checkURL
		client.CheckRedirect = func(req *nethttp.Request, via []*nethttp.Request) error {
			if err := check(req.Context(), req.URL); err != nil {
				return err
			}
			if prev != nil {
				return prev(req, via)
			}
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			return nil
		}
	}
	if !execute.Confined(reach) {
		return &client
	}
	tr, ok := client.Transport.(*nethttp.Transport)
	if !ok {
		tr = nethttp.DefaultTransport.(*nethttp.Transport)
	}
	tr = tr.Clone()
	tr.Proxy = nil
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return reach.Dial(ctx, "url", network, addr)
	}
	client.Transport = tr
	return &client
}

// display is a URL as errors show it: scheme, host and path, without the query (which may
// hold an API key) or user info.
func display(u *url.URL) string {
	return fmt.Sprintf("%s://%s%s", u.Scheme, u.Host, u.EscapedPath())
}
