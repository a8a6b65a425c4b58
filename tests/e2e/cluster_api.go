package e2e

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// The API bodies the cluster tests read (SPEC §2.3, §2.6, §2.9), and checks over them.

// SubmitRequest is the body of POST /v1/runs.
type SubmitRequest struct {
	Config         string            `json:"config"`
	Name           string            `json:"name,omitempty"`
	Pool           string            `json:"pool,omitempty"`
	Labels         map[string]string `json:"labels,omitempty"`
	IdempotencyKey string            `json:"idempotency_key,omitempty"`
	RunKey         string            `json:"run_key,omitempty"`
	TimeoutSecs    int               `json:"timeout_secs,omitempty"`
}

// Submitted is the answer of POST /v1/runs, or its error.
type Submitted struct {
	RunID    string    `json:"run_id"`
	Status   string    `json:"status"`
	Replayed bool      `json:"replayed"`
	Error    *APIError `json:"error"`
}

// APIError is the error body every route answers with (SPEC §2.9).
type APIError struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details"`
}

// RunResource is the run resource (SPEC §2.9), the parts tests read.
type RunResource struct {
	RunID       string `json:"run_id"`
	Name        string `json:"name"`
	Status      string `json:"status"`
	Pool        string `json:"pool"`
	Attempt     int    `json:"attempt"`
	MaxAttempts int    `json:"max_attempts"`
	Owner       *struct {
		InstanceID string `json:"instance_id"`
		Listen     string `json:"listen"`
	} `json:"owner"`
	ClaimedAt  *time.Time `json:"claimed_at"`
	StartedAt  *time.Time `json:"started_at"`
	FinishedAt *time.Time `json:"finished_at"`
	Stats      struct {
		RowsRead    int64 `json:"rows_read"`
		RowsWritten int64 `json:"rows_written"`
		Pages       int64 `json:"pages"`
	} `json:"stats"`
	Error *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
	Attempts []Attempt    `json:"attempts"`
	Shards   *ShardCounts `json:"shards"`
}

// ShardCounts is the shards block of a sharded run's resource.
type ShardCounts struct {
	Total     int `json:"total"`
	Pending   int `json:"pending"`
	Running   int `json:"running"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
}

// Attempt is one claim of a run and how it ended.
type Attempt struct {
	N          int        `json:"n"`
	InstanceID string     `json:"instance_id"`
	ClaimedAt  *time.Time `json:"claimed_at"`
	EndedAt    *time.Time `json:"ended_at"`
	Outcome    *string    `json:"outcome"`
}

// Terminal reports whether the run ended.
func (r RunResource) Terminal() bool {
	return r.Status == "completed" || r.Status == "failed" || r.Status == "cancelled"
}

// Readiness is the body of /readyz (SPEC §2.6).
type Readiness struct {
	Status    string `json:"status"`
	HistoryOK bool   `json:"history_ok"`
	QueueOK   bool   `json:"queue_ok"`
	Draining  bool   `json:"draining"`
	Cluster   struct {
		Enabled   bool     `json:"enabled"`
		Instances int      `json:"instances"`
		Pools     []string `json:"pools"`
		Members   []struct {
			InstanceID    string   `json:"instance_id"`
			Listen        string   `json:"listen"`
			Pools         []string `json:"pools"`
			InFlight      int      `json:"in_flight"`
			MaxConcurrent int      `json:"max_concurrent"`
		} `json:"members"`
	} `json:"cluster"`
}

// Overlapping returns the pairs of a run's attempts whose [claimed_at, ended_at] spans
// overlap — two members holding one run at once. An attempt without an end counts as
// running until now.
func Overlapping(attempts []Attempt) [][2]Attempt {
	var out [][2]Attempt
	end := func(a Attempt) time.Time {
		if a.EndedAt == nil {
			return time.Now()
		}
		return *a.EndedAt
	}
	for i := range attempts {
		for j := i + 1; j < len(attempts); j++ {
			a, b := attempts[i], attempts[j]
			if a.ClaimedAt == nil || b.ClaimedAt == nil {
				continue
			}
			if a.ClaimedAt.Before(end(b)) && b.ClaimedAt.Before(end(a)) {
				out = append(out, [2]Attempt{a, b})
			}
		}
	}
	return out
}

// QuickConfig is a trivial run: count generated rows to the member's stdout.
func QuickConfig(name string, count int) string {
	return fmt.Sprintf(`version: 1
name: %s
pipeline:
  source: { type: generate, config: { count: %d } }
  sink: { type: stdout }
`, name, count)
}

// SlowConfig is a run of count generated rows at rate rows per second to the member's
// stdout: it lasts about count/rate seconds and stops within a page (about a second of
// rows) when its token fires.
func SlowConfig(name string, count int, rate float64) string {
	return fmt.Sprintf(`version: 1
name: %s
pipeline:
  source: { type: generate, config: { count: %d, rate: %g } }
  sink: { type: stdout }
`, name, count, rate)
}

// LogLine is one JSON line a member wrote to stderr.
type LogLine struct {
	Time  time.Time `json:"time"`
	Level string    `json:"level"`
	Msg   string    `json:"msg"`
	RunID string    `json:"run_id"`
	Raw   map[string]any
}

// ParseLogs reads the JSON lines of a member's stderr; other lines are skipped.
func ParseLogs(stderr string) []LogLine {
	var out []LogLine
	for _, line := range strings.Split(stderr, "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var l LogLine
		if json.Unmarshal([]byte(line), &l) != nil {
			continue
		}
		_ = json.Unmarshal([]byte(line), &l.Raw)
		out = append(out, l)
	}
	return out
}

// Outcomes lists the outcome of each attempt ("" while one is open).
func (r RunResource) Outcomes() []string {
	out := make([]string, len(r.Attempts))
	for i, a := range r.Attempts {
		if a.Outcome != nil {
			out[i] = *a.Outcome
		}
	}
	return out
}
