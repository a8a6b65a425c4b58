package http

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/sluicehq/sluice/application/execute"
)

// TraceparentHeader is the W3C Trace Context header a client may send: the request's span
// joins the client's trace, and a run submitted by the request stores it (SPEC §14.6).
const TraceparentHeader = "traceparent"

// trace opens one span per request, named by method and route pattern, as a child of
// the client's traceparent when it sent a valid one. The use-cases the handler calls
// (submit) start their spans under it. With tracing off (execute.NopTracer) the client's
// traceparent still travels in the context, so a submitted run stores it.
func (s *server) trace(c *gin.Context) {
	t := s.deps.Tracer
	// A matched route has one of the methods registered on it; an unmatched request is
	// named by neither its path nor its method, which are client-chosen text.
	name, attrs := "HTTP unmatched", []execute.Attr{execute.A("http.route", "unmatched")}
	if route := c.FullPath(); route != "" {
		name = c.Request.Method + " " + route
		attrs = []execute.Attr{execute.A("http.request.method", c.Request.Method), execute.A("http.route", route)}
	}
	ctx := t.WithTraceparent(c.Request.Context(), c.GetHeader(TraceparentHeader))
	ctx, span := t.Start(ctx, name, append(attrs, execute.A("request_id", RequestIDFrom(ctx)))...)
	c.Request = c.Request.WithContext(ctx)
	// Deferred: a handler that aborts with http.ErrAbortHandler unwinds through here.
	defer func() {
		status := c.Writer.Status()
		span.SetAttrs(execute.A("http.response.status_code", status))
		if p := principal(c).Name; p != "" {
			span.SetAttrs(execute.A("principal", p))
		}
		if status >= http.StatusInternalServerError {
			span.Fail(http.StatusText(status))
		}
		span.End()
	}()
	c.Next()
}
