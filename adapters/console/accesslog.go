package console

import (
	"context"
	"log/slog"
	"net/http"
	"strings"
	"time"
)

// who is filled in by the page handlers once they know the session, so the request's
// log line can name the principal.
type who struct{ name string }

type whoKey struct{}

func noteWho(ctx context.Context, name string) {
	if w, ok := ctx.Value(whoKey{}).(*who); ok {
		w.name = name
	}
}

// recorder remembers the status and size of an answer; Unwrap keeps flushing (the log
// stream) and deadlines reachable through http.ResponseController.
type recorder struct {
	http.ResponseWriter
	status int
	bytes  int
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	n, err := r.ResponseWriter.Write(b)
	r.bytes += n
	return n, err
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// accessLog writes one line per request, like the API's (SPEC §14.6): method, route
// pattern (never the raw path), status, duration, bytes and principal; the request id
// comes with the context.
func (c *console) accessLog(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &recorder{ResponseWriter: w}
		id := &who{}
		r = r.WithContext(context.WithValue(r.Context(), whoKey{}, id))
		next.ServeHTTP(rec, r)
		dur := time.Since(start)
		route := r.Pattern
		if route == "" {
			route = "unmatched"
		}
		status := max(rec.status, http.StatusOK)
		c.log.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("method", r.Method),
			slog.String("route", route),
			slog.Int("status", status),
			slog.Int64("duration_ms", dur.Milliseconds()),
			slog.Int("bytes", rec.bytes),
			slog.String("principal", id.name),
		)
		if c.deps.RequestMetrics != nil {
			method, path := metricLabels(r)
			c.deps.RequestMetrics.Observe(method, path, status, dur)
		}
	})
}

// metricLabels are the method and route labels of a request: the path of the pattern it
// matched, or "unmatched" for the catch-all, whose method is reported as "other" unless it
// is a standard one — labels never take text a client chose.
func metricLabels(r *http.Request) (method, route string) {
	if m, path, ok := strings.Cut(r.Pattern, " "); ok {
		return m, path
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return r.Method, "unmatched"
	}
	return "other", "unmatched"
}
