package http

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// RequestIDHeader carries a request's id in and out (SPEC §14.6).
const RequestIDHeader = "X-Request-Id"

// maxRequestID bounds an id a client sends; a longer or stranger one is replaced, so a
// client cannot write arbitrary text into every log line of its request.
const maxRequestID = 64

type requestIDKey struct{}

// WithRequestID returns ctx carrying the request id id.
func WithRequestID(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, requestIDKey{}, id)
}

// RequestIDFrom is the request id ctx carries, or "".
func RequestIDFrom(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// validRequestID reports whether a client's id may be kept: 1 to 64 characters of
// [A-Za-z0-9._-].
func validRequestID(id string) bool {
	if id == "" || len(id) > maxRequestID {
		return false
	}
	for _, r := range id {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '_', r == '-':
		default:
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails (Go 1.24+)
	return hex.EncodeToString(b[:])
}

// RequestID gives requests served outside this router (the web console) their id by
// the same rules as the API's: the client's valid X-Request-Id or a new one, echoed and
// carried in the request context for LogHandler.
func RequestID(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(RequestIDHeader)
		if !validRequestID(id) {
			id = newRequestID()
		}
		w.Header().Set(RequestIDHeader, id)
		next.ServeHTTP(w, r.WithContext(WithRequestID(r.Context(), id)))
	})
}

// accessLog gives the request its id (the client's X-Request-Id when valid, else a new
// one), echoes it, puts it in the request context so every line logged for the request
// carries it (LogHandler), and writes one line per request once it is answered.
func (s *server) accessLog(c *gin.Context) {
	start := time.Now()
	id := c.GetHeader(RequestIDHeader)
	if !validRequestID(id) {
		id = newRequestID()
	}
	c.Header(RequestIDHeader, id)
	c.Request = c.Request.WithContext(WithRequestID(c.Request.Context(), id))
	c.Next()
	route := c.FullPath()
	if route == "" {
		route = "unmatched"
	}
	s.log.LogAttrs(c.Request.Context(), slog.LevelInfo, "request",
		slog.String("method", c.Request.Method),
		slog.String("route", route),
		slog.Int("status", c.Writer.Status()),
		slog.Int64("duration_ms", time.Since(start).Milliseconds()),
		slog.Int("bytes", max(c.Writer.Size(), 0)),
		slog.String("principal", principal(c).Name),
	)
}

// LogHandler wraps h so that every record logged with a request's context (the access
// line, the handlers' lines and the use-cases' lines alike) carries its request_id.
func LogHandler(h slog.Handler) slog.Handler { return requestIDHandler{h} }

type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestIDFrom(ctx); id != "" {
		r = r.Clone()
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
