package console

import (
	"net/http"
	"strings"

	"github.com/sluicehq/sluice/application/execute"
)

// traceparentHeader is the W3C Trace Context header: a request that sends a valid one
// joins its client's trace.
const traceparentHeader = "traceparent"

// traced opens one span per console request, as the API does for its own (SPEC §14.6):
// named by method and route pattern (never the raw path), a child of the client's
// traceparent, with the status, principal and request id. The use-cases the handler calls
// (a template run's submit, a cancel) start their spans under it.
func (c *console) traced(pattern string, h http.HandlerFunc) http.HandlerFunc {
	method, route, ok := strings.Cut(pattern, " ")
	if !ok {
		// The catch-all: any method, any path below /ui/ — both client-chosen text.
		method, route = "", "unmatched"
	}
	return func(w http.ResponseWriter, r *http.Request) {
		t := c.deps.Tracer
		name := "HTTP unmatched"
		attrs := []execute.Attr{execute.A("http.route", route), execute.A("request_id", w.Header().Get(requestIDHeader))}
		if method != "" {
			name = method + " " + route
			attrs = append(attrs, execute.A("http.request.method", method))
		}
		ctx := t.WithTraceparent(r.Context(), r.Header.Get(traceparentHeader))
		ctx, span := t.Start(ctx, name, attrs...)
		defer func() {
			status := http.StatusOK
			if rec, ok := w.(*recorder); ok && rec.status != 0 {
				status = rec.status
			}
			span.SetAttrs(execute.A("http.response.status_code", status))
			if id, ok := ctx.Value(whoKey{}).(*who); ok && id.name != "" {
				span.SetAttrs(execute.A("principal", id.name))
			}
			if status >= http.StatusInternalServerError {
				span.Fail(http.StatusText(status))
			}
			span.End()
		}()
		h(w, r.WithContext(ctx))
	}
}
