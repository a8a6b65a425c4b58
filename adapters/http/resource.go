package http

import (
	"time"

	"github.com/sluicehq/sluice/application/runs"
)

// runResource is the run as the API shows it (SPEC §2.9): the one view every transport
// shows (MCP answers with the same), never carrying the config — that is a separate,
// operator-only route.
type runResource = runs.View

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

func toResource(r *runs.Record) runResource { return runs.NewView(r, redact) }

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
