package client

import "time"

// RunResource is a run as GET /v1/runs/{id} shows it (SPEC §2.9). Optional values are
// pointers so "absent" and "zero" stay apart.
type RunResource struct {
	RunID       string            `json:"run_id"`
	Name        string            `json:"name"`
	Status      string            `json:"status"`
	Pool        string            `json:"pool"`
	Tenant      *string           `json:"tenant"`
	Labels      map[string]string `json:"labels"`
	TriggerKind string            `json:"trigger_kind"`
	RunKey      *string           `json:"run_key"`
	RunDate     string            `json:"run_date"`
	Attempt     int               `json:"attempt"`
	MaxAttempts int               `json:"max_attempts"`
	Owner       *Owner            `json:"owner"`
	CreatedAt   *time.Time        `json:"created_at"`
	ClaimedAt   *time.Time        `json:"claimed_at"`
	StartedAt   *time.Time        `json:"started_at"`
	FinishedAt  *time.Time        `json:"finished_at"`
	Stats       Stats             `json:"stats"`
	Error       *RunError         `json:"error"`
	Shards      *ShardSummary     `json:"shards"`
	Attempts    []Attempt         `json:"attempts"`
	Template    *TemplateRef      `json:"template"`
	Retry       *Retry            `json:"retry"`
	NotBefore   *time.Time        `json:"not_before"`
}

// Retry is a run's retry policy (SPEC §14.5).
type Retry struct {
	MaxAttempts int     `json:"max_attempts"`
	InitialSecs float64 `json:"initial_secs"`
	MaxSecs     float64 `json:"max_secs"`
	Multiplier  float64 `json:"multiplier"`
	On          string  `json:"on"`
}

// Terminal reports whether the run has ended.
func (r RunResource) Terminal() bool {
	return r.Status == "completed" || r.Status == "failed" || r.Status == "cancelled"
}

// Owner is the member executing a run.
type Owner struct {
	InstanceID string `json:"instance_id"`
	Listen     string `json:"listen"`
}

// Stats are a run's counters.
type Stats struct {
	RowsRead    int64 `json:"rows_read"`
	RowsWritten int64 `json:"rows_written"`
	Pages       int64 `json:"pages"`
	Bytes       int64 `json:"bytes"`
	ElapsedMS   int64 `json:"elapsed_ms"`
}

// RunError is why a run failed: a stable run error code and a message.
type RunError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// ShardSummary counts a sharded run's shards by status.
type ShardSummary struct {
	Total     int `json:"total"`
	Pending   int `json:"pending"`
	Running   int `json:"running"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
}

// Attempt is one claim of a run.
type Attempt struct {
	N          int        `json:"n"`
	InstanceID string     `json:"instance_id"`
	ClaimedAt  *time.Time `json:"claimed_at"`
	EndedAt    *time.Time `json:"ended_at"`
	Outcome    *string    `json:"outcome"`
	Error      *RunError  `json:"error"`
}

// TemplateRef names the template a run was made from.
type TemplateRef struct {
	ID      string `json:"id"`
	Version int    `json:"version"`
}

// SubmitRequest is the body of POST /v1/runs. Config is the pipeline's YAML or JSON text.
type SubmitRequest struct {
	Config         string            `json:"config"`
	Name           string            `json:"name,omitempty"`
	Labels         map[string]string `json:"labels,omitempty"`
	Pool           string            `json:"pool,omitempty"`
	IdempotencyKey string            `json:"idempotency_key,omitempty"`
	RunKey         string            `json:"run_key,omitempty"`
	TimeoutSecs    int               `json:"timeout_secs,omitempty"`
	Callback       *Callback         `json:"callback,omitempty"`
	Clock          *time.Time        `json:"clock,omitempty"`
	Retry          *Retry            `json:"retry,omitempty"`
}

// Callback is a completion callback (SPEC §2.5).
type Callback struct {
	URL         string         `json:"url"`
	On          []string       `json:"on,omitempty"`
	ExtraFields map[string]any `json:"extra_fields,omitempty"`
}

// SubmitResponse answers a submission; Replayed is true when an existing run answered.
type SubmitResponse struct {
	RunID    string `json:"run_id,omitempty"`
	Status   string `json:"status"`
	Replayed bool   `json:"replayed,omitempty"`
	// ChangeRequestID is set (and RunID empty) when the server requires approval.
	ChangeRequestID string `json:"change_request_id,omitempty"`
}

// ListResponse is one page of GET /v1/runs. NextCursor is nil on the last page.
type ListResponse struct {
	Runs       []RunResource `json:"runs"`
	NextCursor *string       `json:"next_cursor"`
}

// LogLine is one persisted log line of a run.
type LogLine struct {
	Seq     int64          `json:"seq"`
	At      time.Time      `json:"at"`
	Level   string         `json:"level"`
	Message string         `json:"message"`
	Attrs   map[string]any `json:"attrs,omitempty"`
}

// LogsResponse is one page of GET /v1/runs/{id}/logs.
type LogsResponse struct {
	Lines     []LogLine `json:"lines"`
	NextAfter int64     `json:"next_after"`
	Done      bool      `json:"done"`
}

// ConfigResponse is GET /v1/runs/{id}/config.
type ConfigResponse struct {
	RunID  string `json:"run_id"`
	Config string `json:"config"`
}

// ErrorBody is the shape of every error answer.
type ErrorBody struct {
	Error ErrorPayload `json:"error"`
}

// ErrorPayload is the error inside an ErrorBody.
type ErrorPayload struct {
	Code      string         `json:"code"`
	Message   string         `json:"message"`
	Details   map[string]any `json:"details,omitempty"`
	RequestID string         `json:"request_id,omitempty"`
}

// StreamEnd is the last event of a followed log stream.
type StreamEnd struct {
	RunID  string `json:"run_id"`
	Status string `json:"status"`
}
