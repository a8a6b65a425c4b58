package runs

import (
	"time"

	"github.com/sluicehq/sluice/domain/run"
)

// View is a run as every transport shows it — the run resource of SPEC §2.9, field for
// field — so an agent over MCP reads the shape a REST client reads. It never carries the
// config. Absent values are null, times RFC 3339 in UTC.
type View struct {
	RunID       string            `json:"run_id" jsonschema:"the run id"`
	Name        string            `json:"name" jsonschema:"the pipeline name"`
	Status      string            `json:"status" jsonschema:"queued, pending, running, sharded, completed, failed or cancelled"`
	Pool        string            `json:"pool" jsonschema:"the execution pool"`
	Tenant      *string           `json:"tenant" jsonschema:"the tenant whose route started it, or null"`
	Labels      map[string]string `json:"labels" jsonschema:"the run's labels"`
	TriggerKind string            `json:"trigger_kind" jsonschema:"what started it: api, cli, mcp, template, tenant, fanout, schedule, backfill, rollback or approval"`
	RunKey      *string           `json:"run_key" jsonschema:"the run key, unique per pipeline, or null"`
	RunDate     string            `json:"run_date" jsonschema:"YYYY-MM-DD of the run's logical instant in the server's zone"`
	Attempt     int               `json:"attempt" jsonschema:"the current attempt, 0 before the first claim"`
	MaxAttempts int               `json:"max_attempts" jsonschema:"attempts allowed before the run fails for good"`
	Owner       *ViewOwner        `json:"owner" jsonschema:"the member executing it, or null"`
	CreatedAt   *string           `json:"created_at" jsonschema:"when it was submitted"`
	ClaimedAt   *string           `json:"claimed_at" jsonschema:"when a member last claimed it, or null"`
	StartedAt   *string           `json:"started_at" jsonschema:"when it started moving rows, or null"`
	FinishedAt  *string           `json:"finished_at" jsonschema:"when it ended, or null while it has not"`
	Stats       Stats             `json:"stats" jsonschema:"rows read and written, pages, bytes, elapsed milliseconds"`
	Error       *ViewError        `json:"error" jsonschema:"why it failed, or null"`
	Shards      *ShardSummary     `json:"shards" jsonschema:"its shards by status once it was split, or null"`
	Attempts    []ViewAttempt     `json:"attempts" jsonschema:"every claim of the run, oldest first"`
	Retry       *Retry            `json:"retry" jsonschema:"the run's retry policy, or null when a failure is final"`
	NotBefore   *string           `json:"not_before" jsonschema:"when a pending run that waits for its retry may be claimed again, or null"`
	Template    *ViewTemplate     `json:"template" jsonschema:"the template id and version it materializes, or null"`
}

// ViewOwner is the member executing a run.
type ViewOwner struct {
	InstanceID string `json:"instance_id" jsonschema:"the member's instance id"`
	Listen     string `json:"listen" jsonschema:"the member's API address"`
}

// ViewError is a run's failure: a stable code and a redacted message.
type ViewError struct {
	Code    string `json:"code" jsonschema:"a stable run error code"`
	Message string `json:"message" jsonschema:"what went wrong, with secrets masked"`
}

// ViewAttempt is one claim of a run.
type ViewAttempt struct {
	N          int        `json:"n" jsonschema:"the attempt number"`
	InstanceID string     `json:"instance_id" jsonschema:"the member that claimed it"`
	ClaimedAt  *string    `json:"claimed_at" jsonschema:"when"`
	EndedAt    *string    `json:"ended_at" jsonschema:"when the attempt ended, or null"`
	Outcome    *string    `json:"outcome" jsonschema:"completed, failed, cancelled, lost or handed_back; null while running"`
	Error      *ViewError `json:"error" jsonschema:"why a failed attempt failed, or null"`
}

// ViewTemplate names the template version a run was made from.
type ViewTemplate struct {
	ID      string `json:"id" jsonschema:"the template id"`
	Version int    `json:"version" jsonschema:"the template version"`
}

// NewView shows r; redact masks secrets in its error message.
func NewView(r *Record, redact func(string) string) View {
	out := View{RunID: r.ID, Name: r.Name, Status: r.Status, Pool: r.Pool, Tenant: optional(r.Tenant),
		Labels: r.Labels, TriggerKind: r.TriggerKind, RunKey: optional(r.RunKey), RunDate: r.RunDate,
		Attempt: r.Attempt, MaxAttempts: r.MaxAttempts, CreatedAt: optionalTime(r.CreatedAt),
		ClaimedAt: optionalTime(r.ClaimedAt), StartedAt: optionalTime(r.StartedAt),
		FinishedAt: optionalTime(r.FinishedAt), Stats: r.Stats, Shards: r.Shards,
		Attempts: make([]ViewAttempt, 0, len(r.Attempts)), Retry: RetryOf(r.Retry)}
	if r.Status == string(run.Pending) {
		out.NotBefore = optionalTime(r.NotBefore)
	}
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	if r.Owner != "" {
		out.Owner = &ViewOwner{InstanceID: r.Owner, Listen: r.OwnerListen}
	}
	if r.ErrorCode != "" {
		out.Error = &ViewError{Code: r.ErrorCode, Message: redact(r.ErrorMessage)}
	}
	for _, a := range r.Attempts {
		va := ViewAttempt{N: a.N, InstanceID: a.InstanceID, ClaimedAt: optionalTime(a.ClaimedAt), Outcome: optional(string(a.Outcome))}
		if !a.Open() {
			va.EndedAt = optionalTime(a.EndedAt)
		}
		if a.Error != nil {
			va.Error = &ViewError{Code: string(a.Error.Code), Message: redact(a.Error.Message)}
		}
		out.Attempts = append(out.Attempts, va)
	}
	if r.TemplateID != "" {
		out.Template = &ViewTemplate{ID: r.TemplateID, Version: r.TemplateVersion}
	}
	return out
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func optionalTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := t.UTC().Format(time.RFC3339Nano)
	return &s
}
