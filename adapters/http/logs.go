package http

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/sluicehq/sluice/application/runs"
)

// Log page limits: a run keeps at most 10,000 lines (SPEC §2.3), so one page can hold all.
const (
	defaultLogLimit = runs.DefaultLogsLimit
	maxLogLimit     = runs.MaxLogsLimit
	// keepAliveEvery is how long a followed stream may stay silent before a comment line
	// is sent, so proxies don't cut an idle but live stream.
	keepAliveEvery = 15 * time.Second
)

type logLine struct {
	Seq     int64          `json:"seq"`
	At      string         `json:"at"`
	Level   string         `json:"level"`
	Message string         `json:"message"`
	Attrs   map[string]any `json:"attrs,omitempty"`
}

type logsResponse struct {
	Lines []logLine `json:"lines"`
	// NextAfter is the `after` value that continues this page.
	NextAfter int64 `json:"next_after"`
	// Done is true when the run is terminal and every line has been returned.
	Done bool `json:"done"`
}

// endEvent closes a followed stream: the run is terminal and every line was sent.
type endEvent struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
}

func toLogLines(in []runs.LogLine) []logLine {
	out := make([]logLine, 0, len(in))
	for _, l := range in {
		out = append(out, logLine{Seq: l.Seq, At: formatTime(l.At), Level: l.Level, Message: l.Message, Attrs: l.Attrs})
	}
	return out
}

// logs is GET /v1/runs/{id}/logs: one page as JSON, or with follow=1 a server-sent event
// stream of every new line until the run is terminal.
func (s *server) logs(c *gin.Context) {
	q := c.Request.URL.Query()
	if err := checkQuery(q, "after", "limit", "follow"); err != nil {
		s.fail(c, err)
		return
	}
	after, err := queryInt(q, "after", 0, 0, math.MaxInt64)
	if err != nil {
		s.fail(c, err)
		return
	}
	limit, err := queryInt(q, "limit", defaultLogLimit, 1, maxLogLimit)
	if err != nil {
		s.fail(c, err)
		return
	}
	follow, err := queryBool(q, "follow")
	if err != nil {
		s.fail(c, err)
		return
	}
	if follow && q.Get("after") == "" {
		// A reconnecting EventSource resumes where it stopped.
		if id := c.GetHeader("Last-Event-ID"); id != "" {
			if after, err = strconv.ParseInt(id, 10, 64); err != nil || after < 0 {
				s.fail(c, invalidBody("header Last-Event-ID must be a line seq, not %q", id))
				return
			}
		}
	}
	p := principal(c)
	if p.Tenant != "" {
		if _, err := s.record(c); err != nil {
			s.fail(c, err)
			return
		}
	}
	id := c.Param("id")
	// A follower subscribes before its first read, so a change committed between the
	// read and its wait still wakes it.
	var changed <-chan struct{}
	if follow {
		if s.deps.RunChanges != nil {
			var stop func()
			changed, stop = s.deps.RunChanges.Follow(id)
			defer stop()
		}
		// After subscribing, before the first read: the run's end, on whichever member,
		// then either comes before that read or wakes the subscription.
		if err := s.deps.Runs.Follow(c.Request.Context(), p, id); err != nil {
			s.fail(c, err)
			return
		}
	}
	page, err := s.deps.Runs.Logs(c.Request.Context(), p, id, after, int(limit))
	if err != nil {
		s.fail(c, err)
		return
	}
	if !follow {
		c.JSON(http.StatusOK, logsResponse{Lines: toLogLines(page.Lines), NextAfter: page.Next, Done: page.Done})
		return
	}
	s.stream(c, p, id, after, page, int(limit), changed)
}

// stream writes SSE events: `line` per log line (id = seq), a final `end` with the run's
// status, or `error` when the history fails mid-stream (headers are already sent then).
// It re-reads the history when changed says the run changed in this process (new lines,
// its end), so the `end` event follows the run's finish at once; every PollInterval it
// re-reads anyway, for runs another cluster member executes.
func (s *server) stream(c *gin.Context, p runs.Principal, id string, after int64, page runs.LogPage, limit int, changed <-chan struct{}) {
	ctx := c.Request.Context()
	// A server-wide WriteTimeout suits short answers, not a stream that lasts as long as
	// the run; lift it for this response (an error only means there was none to lift).
	_ = http.NewResponseController(c.Writer).SetWriteDeadline(time.Time{})
	h := c.Writer.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	c.Status(http.StatusOK)
	w := c.Writer
	silentSince := time.Now()
	for {
		// The position never moves backwards, whatever an empty page reports as Next.
		after = max(after, page.Next)
		for _, l := range toLogLines(page.Lines) {
			writeEvent(w, "line", strconv.FormatInt(l.Seq, 10), l)
		}
		if len(page.Lines) > 0 {
			silentSince = time.Now()
		}
		if page.Done {
			status := ""
			if rec, err := s.deps.Runs.Get(ctx, p, id); err == nil {
				status = rec.Status
			}
			writeEvent(w, "end", "", endEvent{RunID: id, Status: status})
			w.Flush()
			return
		}
		if time.Since(silentSince) >= keepAliveEvery {
			_, _ = fmt.Fprint(w, ": keep-alive\n\n")
			silentSince = time.Now()
		}
		w.Flush()
		// A full page means more lines are waiting: fetch them without sleeping.
		if len(page.Lines) < limit && !waitChange(ctx, changed, s.cfg.PollInterval) {
			return
		}
		next, err := s.deps.Runs.Logs(ctx, p, id, after, limit)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			ae, known := classify(err)
			if !known {
				s.log.ErrorContext(ctx, "following logs failed", "run_id", id, "error", redact(err.Error()))
			}
			writeEvent(w, "error", "", errorBody{Error: errorPayload{Code: ae.code, Message: ae.message}})
			w.Flush()
			return
		}
		page = next
	}
}

func writeEvent(w gin.ResponseWriter, event, id string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	if id != "" {
		_, _ = fmt.Fprintf(w, "id: %s\n", id)
	}
	_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
}

// waitChange waits until changed signals or d passed; false when ctx ended first (the
// client went away). A nil changed waits d.
func waitChange(ctx context.Context, changed <-chan struct{}, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-changed:
		return true
	case <-t.C:
		return true
	}
}
