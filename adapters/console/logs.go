package console

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/application/runs"
)

// logKeepAlive is how long a log stream may stay silent before a comment is sent.
const logKeepAlive = 15 * time.Second

type logEvent struct {
	Seq     int64  `json:"seq"`
	At      string `json:"at"`
	Level   string `json:"level"`
	Message string `json:"message"`
}

// runLogs streams a run's log lines as server-sent events (`line`, then `end` with the
// final status once the run is terminal and every line was sent), reading the history
// through the runs service at the poll interval, and checking at each poll that the
// session still holds (`failure` when it ended). A reconnecting EventSource resumes
// after Last-Event-ID.
func (c *console) runLogs(w http.ResponseWriter, r *http.Request, sess session) {
	ctx := r.Context()
	p, id := principal(sess), r.PathValue("id")
	after, _ := strconv.ParseInt(r.Header.Get("Last-Event-ID"), 10, 64)
	after = max(after, 0)
	page, err := c.deps.Runs.Logs(ctx, p, id, after, runs.MaxLogsLimit)
	if err != nil {
		status, _, msg, _ := c.deps.Explain(err)
		http.Error(w, msg, status)
		return
	}
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	flush := func() { _ = rc.Flush() }
	quiet := time.Now()
	tick := time.NewTicker(c.cfg.PollInterval)
	defer tick.Stop()
	for {
		for _, l := range page.Lines {
			sse(w, "line", strconv.FormatInt(l.Seq, 10), logEvent{Seq: l.Seq, At: l.At.UTC().Format(time.RFC3339Nano),
				Level: l.Level, Message: l.Message})
			after = max(after, l.Seq)
			quiet = time.Now()
		}
		after = max(after, page.Next)
		if page.Done {
			status := ""
			if rec, err := c.deps.Runs.Get(ctx, p, id); err == nil {
				status = rec.Status
			}
			sse(w, "end", "", map[string]string{"status": status})
			flush()
			return
		}
		if time.Since(quiet) >= logKeepAlive {
			_, _ = fmt.Fprint(w, ": keep-alive\n\n")
			quiet = time.Now()
		}
		flush()
		if len(page.Lines) < runs.MaxLogsLimit {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
		// A stream outlives no session: signed out (on any member) or expired, it stops
		// at the next poll instead of following the run for as long as it lasts.
		if _, ok := c.current(r); !ok {
			sse(w, "failure", "", map[string]string{"code": "unauthenticated", "message": "your session has ended: sign in again"})
			flush()
			return
		}
		if page, err = c.deps.Runs.Logs(ctx, p, id, after, runs.MaxLogsLimit); err != nil {
			if ctx.Err() == nil {
				_, code, msg, _ := c.deps.Explain(err)
				sse(w, "failure", "", map[string]string{"code": code, "message": msg})
				flush()
			}
			return
		}
	}
}

func sse(w http.ResponseWriter, event, id string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	if id != "" {
		_, _ = fmt.Fprintf(w, "id: %s\n", id)
	}
	_, _ = fmt.Fprintf(w, "event: %s\ndata: %s\n\n", event, data)
}
