package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// runColumns are the sluice_runs columns a Record is read from, in runRow order.
var runColumns = []string{
	"id", "name", "tenant", "pool", "status", "labels", "trigger_kind", "run_key", "run_date",
	"logical_at", "serial", "max_active", "attempt", "max_attempts", "attempts", "owner", "owner_listen",
	"lease_epoch", "lease_expires_at", "cancel_requested", "timeout_secs", "config",
	"config_sealed", "callback", "template_id", "template_version", "shard_count",
	"rows_read", "rows_written", "pages", "bytes", "elapsed_ms", "error_code", "error_message",
	"log_lines", "log_bytes", "log_truncated", "created_at", "claimed_at", "started_at", "finished_at",
	"retry", "not_before", "traceparent", "followed",
}

// runCols is runColumns as a select list, optionally qualified by a table alias.
func runCols(prefix string) string {
	if prefix == "" {
		return strings.Join(runColumns, ", ")
	}
	return prefix + strings.Join(runColumns, ", "+prefix)
}

// runRow is one sluice_runs row. NULL reads as the zero value.
type runRow struct {
	ID              string `bun:"id"`
	Name            string `bun:"name"`
	Tenant          string `bun:"tenant"`
	Pool            string `bun:"pool"`
	Status          string `bun:"status"`
	Labels          string `bun:"labels"`
	TriggerKind     string `bun:"trigger_kind"`
	RunKey          string `bun:"run_key"`
	RunDate         string `bun:"run_date"`
	LogicalAt       int64  `bun:"logical_at"`
	Serial          bool   `bun:"serial"`
	MaxActive       int    `bun:"max_active"`
	Attempt         int    `bun:"attempt"`
	MaxAttempts     int    `bun:"max_attempts"`
	Attempts        string `bun:"attempts"`
	Owner           string `bun:"owner"`
	OwnerListen     string `bun:"owner_listen"`
	LeaseEpoch      int64  `bun:"lease_epoch"`
	LeaseExpiresAt  int64  `bun:"lease_expires_at"`
	CancelRequested bool   `bun:"cancel_requested"`
	TimeoutSecs     int    `bun:"timeout_secs"`
	Config          string `bun:"config"`
	ConfigSealed    bool   `bun:"config_sealed"`
	Callback        string `bun:"callback"`
	TemplateID      string `bun:"template_id"`
	TemplateVersion int    `bun:"template_version"`
	ShardCount      int    `bun:"shard_count"`
	RowsRead        int64  `bun:"rows_read"`
	RowsWritten     int64  `bun:"rows_written"`
	Pages           int64  `bun:"pages"`
	Bytes           int64  `bun:"bytes"`
	ElapsedMS       int64  `bun:"elapsed_ms"`
	ErrorCode       string `bun:"error_code"`
	ErrorMessage    string `bun:"error_message"`
	LogLines        int    `bun:"log_lines"`
	LogBytes        int64  `bun:"log_bytes"`
	LogTruncated    bool   `bun:"log_truncated"`
	CreatedAt       int64  `bun:"created_at"`
	ClaimedAt       int64  `bun:"claimed_at"`
	StartedAt       int64  `bun:"started_at"`
	FinishedAt      int64  `bun:"finished_at"`
	Retry           string `bun:"retry"`
	NotBefore       int64  `bun:"not_before"`
	Traceparent     string `bun:"traceparent"`
	Followed        bool   `bun:"followed"`
}

// attemptJSON is one element of the attempts column: times in Unix milliseconds.
type attemptJSON struct {
	N          int    `json:"n"`
	InstanceID string `json:"instance_id"`
	ClaimedAt  int64  `json:"claimed_at"`
	EndedAt    *int64 `json:"ended_at,omitempty"`
	Outcome    string `json:"outcome,omitempty"`
	// ErrorCode and ErrorMessage are why a failed attempt failed; JSON null otherwise.
	ErrorCode    *string `json:"error_code,omitempty"`
	ErrorMessage *string `json:"error_message,omitempty"`
}

func (r *runRow) record() (*runs.Record, error) {
	rec := &runs.Record{
		ID: r.ID, Name: r.Name, Tenant: r.Tenant, Pool: r.Pool, Status: r.Status,
		TriggerKind: r.TriggerKind, RunKey: r.RunKey, RunDate: r.RunDate,
		LogicalAt: fromMS(r.LogicalAt), Serial: r.Serial, MaxActive: r.MaxActive, Attempt: r.Attempt,
		MaxAttempts: r.MaxAttempts, Owner: r.Owner, OwnerListen: r.OwnerListen,
		LeaseEpoch: r.LeaseEpoch, LeaseExpiresAt: fromMS(r.LeaseExpiresAt),
		CancelRequested: r.CancelRequested, TimeoutSecs: r.TimeoutSecs, Config: r.Config,
		ConfigSealed: r.ConfigSealed, TemplateID: r.TemplateID, TemplateVersion: r.TemplateVersion,
		ShardCount: r.ShardCount,
		Stats: runs.Stats{
			RowsRead: r.RowsRead, RowsWritten: r.RowsWritten, Pages: r.Pages, Bytes: r.Bytes,
			ElapsedMS: r.ElapsedMS,
		},
		ErrorCode: r.ErrorCode, ErrorMessage: r.ErrorMessage, LogLines: r.LogLines,
		LogBytes: r.LogBytes, LogTruncated: r.LogTruncated, CreatedAt: fromMS(r.CreatedAt), ClaimedAt: fromMS(r.ClaimedAt),
		StartedAt: fromMS(r.StartedAt), FinishedAt: fromMS(r.FinishedAt), NotBefore: fromMS(r.NotBefore),
		Traceparent: r.Traceparent, Followed: r.Followed,
	}
	retry, err := decodeRetry(r.ID, r.Retry)
	if err != nil {
		return nil, err
	}
	rec.Retry = retry
	if r.Labels != "" && r.Labels != "{}" {
		if err := json.Unmarshal([]byte(r.Labels), &rec.Labels); err != nil {
			return nil, fmt.Errorf("run %s: stored labels are not a JSON object: %w", r.ID, err)
		}
	}
	if r.Callback != "" {
		rec.Callback = &runs.Callback{}
		if err := json.Unmarshal([]byte(r.Callback), rec.Callback); err != nil {
			return nil, fmt.Errorf("run %s: stored callback is not JSON: %w", r.ID, err)
		}
	}
	atts, err := decodeAttempts(r.ID, r.Attempts)
	if err != nil {
		return nil, err
	}
	for _, a := range atts {
		ra := run.Attempt{N: a.N, InstanceID: a.InstanceID, ClaimedAt: fromMS(a.ClaimedAt), Outcome: run.Outcome(a.Outcome)}
		if a.EndedAt != nil {
			ra.EndedAt = fromMS(*a.EndedAt)
		}
		if code := deref(a.ErrorCode); code != "" {
			ra.Error = &run.Error{Code: run.ErrorCode(code), Message: deref(a.ErrorMessage)}
		}
		rec.Attempts = append(rec.Attempts, ra)
	}
	return rec, nil
}

// decodeRetry reads the retry column: NULL (or "") is no policy.
func decodeRetry(id, raw string) (*run.Retry, error) {
	if raw == "" {
		return nil, nil
	}
	var r runs.Retry
	if err := json.Unmarshal([]byte(raw), &r); err != nil {
		return nil, fmt.Errorf("run %s: stored retry policy is not JSON: %w", id, err)
	}
	return r.PolicyOf(), nil
}

// encodeRetry writes the retry column: nil is NULL.
func encodeRetry(p *run.Retry) (any, error) {
	if p == nil {
		return nil, nil
	}
	b, err := json.Marshal(runs.RetryOf(p))
	if err != nil {
		return nil, fmt.Errorf("retry: %w", err)
	}
	return string(b), nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func decodeAttempts(id, raw string) ([]attemptJSON, error) {
	if raw == "" {
		return nil, nil
	}
	var atts []attemptJSON
	if err := json.Unmarshal([]byte(raw), &atts); err != nil {
		return nil, fmt.Errorf("run %s: stored attempts are not a JSON array: %w", id, err)
	}
	return atts, nil
}

// callbackInput is what the CallbackBuilder sees of a run that just ended.
func callbackInput(rec *runs.Record) runs.CallbackInput {
	return runs.CallbackInput{
		RunID: rec.ID, Name: rec.Name, Status: rec.Status, Pool: rec.Pool, Tenant: rec.Tenant,
		RunKey: rec.RunKey, Labels: rec.Labels, StartedAt: rec.StartedAt,
		FinishedAt: rec.FinishedAt, Stats: rec.Stats, ErrorCode: rec.ErrorCode,
		ErrorMessage: rec.ErrorMessage, Callback: rec.Callback,
	}
}

// claimedColumns are what a claim returns, optionally qualified.
func claimedColumns(prefix string) string {
	cols := []string{"id", "name", "tenant", "pool", "lease_epoch", "attempt", "max_attempts",
		"config", "config_sealed", "timeout_secs", "elapsed_ms", "logical_at", "run_date",
		"created_at", "shard_count", "retry", "traceparent"}
	return prefix + strings.Join(cols, ", "+prefix)
}

type claimedRow struct {
	ID          string `bun:"id"`
	Name        string `bun:"name"`
	Tenant      string `bun:"tenant"`
	Pool        string `bun:"pool"`
	LeaseEpoch  int64  `bun:"lease_epoch"`
	Attempt     int    `bun:"attempt"`
	MaxAttempts int    `bun:"max_attempts"`
	Config      string `bun:"config"`
	Sealed      bool   `bun:"config_sealed"`
	TimeoutSecs int    `bun:"timeout_secs"`
	ElapsedMS   int64  `bun:"elapsed_ms"`
	LogicalAt   int64  `bun:"logical_at"`
	RunDate     string `bun:"run_date"`
	CreatedAt   int64  `bun:"created_at"`
	ShardCount  int    `bun:"shard_count"`
	Retry       string `bun:"retry"`
	Traceparent string `bun:"traceparent"` // NULL when untraced
}

// claimed is the claim as the member sees it. A retry policy that does not read back
// (it was validated when stored, so only a damaged row) is dropped: the run then fails
// for good rather than not at all.
func (c claimedRow) claimed() cluster.Claimed {
	retry, _ := decodeRetry(c.ID, c.Retry)
	return cluster.Claimed{Retry: retry,
		ID: c.ID, Name: c.Name, Tenant: c.Tenant, Pool: c.Pool, Epoch: c.LeaseEpoch,
		Attempt: c.Attempt, MaxAttempts: c.MaxAttempts, Config: c.Config, Sealed: c.Sealed,
		TimeoutSecs: c.TimeoutSecs, ElapsedMS: c.ElapsedMS, LogicalAt: fromMS(c.LogicalAt),
		RunDate: c.RunDate, CreatedAt: fromMS(c.CreatedAt), ShardCount: c.ShardCount,
		Traceparent: c.Traceparent,
	}
}

// fromMS reads a stored time; 0 (or NULL) is the zero time.
func fromMS(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// msOrNull writes a time: the zero time is NULL.
func msOrNull(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMilli()
}

// msOrZero writes a time to a NOT NULL column: the zero time is 0 (fromMS reads it back
// as the zero time).
func msOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// nullIfEmpty writes "" as NULL.
func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// nullIfZero writes 0 as NULL.
func nullIfZero(n int) any {
	if n == 0 {
		return nil
	}
	return n
}

// qualify prefixes every column of a comma-separated list with a table alias.
func qualify(prefix, cols string) string {
	return prefix + strings.ReplaceAll(cols, ", ", ", "+prefix)
}
