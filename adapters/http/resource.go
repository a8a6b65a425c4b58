package http

import (
	"time"

	"github.com/sluicehq/sluice/application/runs"
)

// runResource is the run as the API shows it (SPEC §2.9). It never carries the config:
// that is a separate, operator-only route.
type runResource struct {
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
	Owner       *ownerResource    `json:"owner"`
	CreatedAt   *string           `json:"created_at"`
	ClaimedAt   *string           `json:"claimed_at"`
	StartedAt   *string           `json:"started_at"`
	FinishedAt  *string           `json:"finished_at"`
	Stats       statsResource     `json:"stats"`
	Error       *runError         `json:"error"`
	// Shards counts the shards by status once the run was split; null before (and for a
	// run that never is).
	Shards   *shardsSummary    `json:"shards"`
	Attempts []attemptResource `json:"attempts"`
	Template *templateResource `json:"template"`
}

type ownerResource struct {
	InstanceID string `json:"instance_id"`
	Listen     string `json:"listen"`
}

type statsResource struct {
	RowsRead    int64 `json:"rows_read"`
	RowsWritten int64 `json:"rows_written"`
	Pages       int64 `json:"pages"`
	Bytes       int64 `json:"bytes"`
	ElapsedMS   int64 `json:"elapsed_ms"`
}

type runError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

type shardsSummary struct {
	Total     int `json:"total"`
	Pending   int `json:"pending"`
	Running   int `json:"running"`
	Completed int `json:"completed"`
	Failed    int `json:"failed"`
	Cancelled int `json:"cancelled"`
}

// shardResource is one shard of a sharded run (GET /v1/runs/{id}/shards).
type shardResource struct {
	Index       int            `json:"index"`
	Status      string         `json:"status"`
	Attempt     int            `json:"attempt"`
	MaxAttempts int            `json:"max_attempts"`
	Owner       *ownerResource `json:"owner"`
	Range       *keyRange      `json:"range"`
	Stats       statsResource  `json:"stats"`
	Error       *runError      `json:"error"`
	ClaimedAt   *string        `json:"claimed_at"`
	FinishedAt  *string        `json:"finished_at"`
}

// keyRange is the slice of a key-range shard: keys lo..hi, and the NULL keys when nulls.
type keyRange struct {
	Lo    int64 `json:"lo"`
	Hi    int64 `json:"hi"`
	Nulls bool  `json:"nulls"`
}

func toShardResource(sh runs.ShardRecord) shardResource {
	out := shardResource{Index: sh.Index, Status: sh.Status, Attempt: sh.Attempt, MaxAttempts: sh.MaxAttempts,
		Stats: statsResource{RowsRead: sh.Stats.RowsRead, RowsWritten: sh.Stats.RowsWritten, Pages: sh.Stats.Pages,
			Bytes: sh.Stats.Bytes, ElapsedMS: sh.Stats.ElapsedMS},
		ClaimedAt: optTime(sh.ClaimedAt), FinishedAt: optTime(sh.FinishedAt)}
	if sh.Owner != "" {
		out.Owner = &ownerResource{InstanceID: sh.Owner, Listen: sh.OwnerListen}
	}
	if sh.HasRange {
		out.Range = &keyRange{Lo: sh.KeyLo, Hi: sh.KeyHi, Nulls: sh.KeyNulls}
	}
	if sh.ErrorCode != "" {
		out.Error = &runError{Code: sh.ErrorCode, Message: redact(sh.ErrorMessage)}
	}
	return out
}

type attemptResource struct {
	N          int     `json:"n"`
	InstanceID string  `json:"instance_id"`
	ClaimedAt  *string `json:"claimed_at"`
	EndedAt    *string `json:"ended_at"`
	Outcome    *string `json:"outcome"`
}

type templateResource struct {
	ID      string `json:"id"`
	Version int    `json:"version"`
}

func toResource(r *runs.Record) runResource {
	out := runResource{
		RunID:       r.ID,
		Name:        r.Name,
		Status:      r.Status,
		Pool:        r.Pool,
		Tenant:      optString(r.Tenant),
		Labels:      r.Labels,
		TriggerKind: r.TriggerKind,
		RunKey:      optString(r.RunKey),
		RunDate:     r.RunDate,
		Attempt:     r.Attempt,
		MaxAttempts: r.MaxAttempts,
		CreatedAt:   optTime(r.CreatedAt),
		ClaimedAt:   optTime(r.ClaimedAt),
		StartedAt:   optTime(r.StartedAt),
		FinishedAt:  optTime(r.FinishedAt),
		Stats: statsResource{
			RowsRead: r.Stats.RowsRead, RowsWritten: r.Stats.RowsWritten, Pages: r.Stats.Pages,
			Bytes: r.Stats.Bytes, ElapsedMS: r.Stats.ElapsedMS,
		},
		Attempts: make([]attemptResource, 0, len(r.Attempts)),
	}
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	if r.Owner != "" {
		out.Owner = &ownerResource{InstanceID: r.Owner, Listen: r.OwnerListen}
	}
	if r.ErrorCode != "" {
		out.Error = &runError{Code: r.ErrorCode, Message: redact(r.ErrorMessage)}
	}
	for _, a := range r.Attempts {
		ar := attemptResource{N: a.N, InstanceID: a.InstanceID, ClaimedAt: optTime(a.ClaimedAt),
			Outcome: optString(a.Outcome)}
		if a.EndedAt != nil {
			ar.EndedAt = optTime(*a.EndedAt)
		}
		out.Attempts = append(out.Attempts, ar)
	}
	if r.TemplateID != "" {
		out.Template = &templateResource{ID: r.TemplateID, Version: r.TemplateVersion}
	}
	if sm := r.Shards; sm != nil {
		out.Shards = &shardsSummary{Total: sm.Total, Pending: sm.Pending, Running: sm.Running,
			Completed: sm.Completed, Failed: sm.Failed, Cancelled: sm.Cancelled}
	}
	return out
}

// formatTime is the one time format of the API: RFC 3339 in UTC.
func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

func optTime(t time.Time) *string {
	if t.IsZero() {
		return nil
	}
	s := formatTime(t)
	return &s
}

func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}
