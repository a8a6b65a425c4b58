package runs

import (
	"time"

	"github.com/sluicehq/sluice/domain/run"
)

// Record is a run as the history stores it: the fields of the run resource (SPEC §2.9)
// plus what the server needs to execute it. The store reads and writes Records; rules
// about them live in domain/run.
type Record struct {
	ID          string
	Name        string
	Tenant      string
	Pool        string
	Status      string // a run.Status value
	Labels      map[string]string
	TriggerKind string
	RunKey      string // "" when none
	RunDate     string // YYYY-MM-DD of the logical instant
	LogicalAt   time.Time
	Serial      bool // one active run per pipeline key (incremental state, schedules)
	// MaxActive is how many runs of a serial run's pipeline key may be active at once
	// (a backfill's max_active); 0 means 1.
	MaxActive       int
	Attempt         int
	MaxAttempts     int
	Attempts        []run.Attempt
	Owner           string // instance id; "" when unowned
	OwnerListen     string
	LeaseEpoch      int64
	LeaseExpiresAt  time.Time // zero when unowned
	CancelRequested bool
	TimeoutSecs     int // 0 = none
	// Retry is the run's retry policy (SPEC §14.5); nil: a failure is final.
	Retry *run.Retry
	// NotBefore is when a pending run that waits for its retry becomes claimable (by
	// the history's clock); zero when it does not wait.
	NotBefore    time.Time
	Config       string
	ConfigSealed bool
	// Secrets are the sealed values of the config's ${sealed:N} tokens, index N (SPEC
	// §7.2). Create stores them apart from the run record, in its transaction; reads of a
	// run leave them nil.
	Secrets [][]byte
	// QueueLimit, when > 0, makes Create refuse the run with ErrQueueFull (QueueFull)
	// once the pending and queued runs plus QueueInFlight() (runs admitted without a
	// count, maybe not inserted yet) reach it, counting in the transaction of the insert
	// so concurrent submits cannot all pass one count (SPEC §14.3). QueueInFlight is asked
	// in the transaction, not when the run was admitted: a submit that waited long for
	// its transaction must also see the runs admitted while it waited. Not stored.
	QueueLimit      int
	QueueInFlight   func() int
	Callback        *Callback
	TemplateID      string
	TemplateVersion int
	ShardCount      int
	// Traceparent is the W3C traceparent of the submission's span (SPEC §14.6): the
	// member that executes the run starts its spans under it; "" when untraced.
	Traceparent string
	// Followed is true once a client follows the run's log (Service.Follow): its terminal
	// transition then tells the followers on every cluster member at once. Set by the
	// history only (Store.MarkFollowed); Create ignores it.
	Followed bool
	// Shards counts the shards of a run that was split, by status (SPEC §2.9); nil for a
	// run that never was. While the run is sharded its Stats are the sums over its shards.
	Shards       *ShardSummary
	Stats        Stats
	ErrorCode    string
	ErrorMessage string
	LogLines     int
	LogBytes     int64
	LogTruncated bool // the persisted log reached its cap (SPEC §2.3)
	CreatedAt    time.Time
	ClaimedAt    time.Time // zero when never claimed
	StartedAt    time.Time
	FinishedAt   time.Time
	// Audit, when set, is the submission's audit entry (SPEC §2.10): Create and CreateTick
	// append it in the transaction that stores the run, so the run and its entry commit
	// together in one write, and set Details["status"] to the status they stored. Reads
	// of a run leave it nil.
	Audit *AuditEntry
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

// ShardRecord is one shard of a sharded run as GET /v1/runs/{id}/shards shows it.
type ShardRecord struct {
	Index       int
	Status      string // a shard.Status value
	Attempt     int
	MaxAttempts int
	Owner       string // instance id; "" when unowned
	OwnerListen string
	// KeyLo..KeyHi (inclusive, with the NULL keys when KeyNulls) is a key-range shard's
	// slice; HasRange is false for a hash bucket.
	HasRange     bool
	KeyLo, KeyHi int64
	KeyNulls     bool
	Stats        Stats
	ErrorCode    string
	ErrorMessage string
	ClaimedAt    time.Time
	FinishedAt   time.Time
}

// Stats are a run's counters.
type Stats struct {
	RowsRead    int64 `json:"rows_read"`
	RowsWritten int64 `json:"rows_written"`
	Pages       int64 `json:"pages"`
	Bytes       int64 `json:"bytes"`
	ElapsedMS   int64 `json:"elapsed_ms"`
}

// Callback is a completion callback (SPEC §2.5).
type Callback struct {
	URL         string         `json:"url"`
	On          []string       `json:"on,omitempty"`
	ExtraFields map[string]any `json:"extra_fields,omitempty"`
	// Sealed is the vault ciphertext (base64) of the other fields, bound to the run id,
	// when the server has a vault key (SPEC §7.3); the other fields are empty then.
	// OpenCallback reads it back.
	Sealed string `json:"sealed,omitempty"`
}

// Filter selects runs for List. Zero values match everything.
type Filter struct {
	Status []string
	Name   string
	Pool   string
	Tenant string
	// TenantSet distinguishes "untenanted runs only" (Tenant "" and TenantSet) from no filter.
	TenantSet bool
	RunKey    string
	Labels    map[string]string // AND of key=value
	Since     time.Time         // created_at >= Since
	Until     time.Time         // created_at < Until
	Limit     int
	// After is the keyset cursor: the id of the last run of the previous page. Runs are
	// listed newest first (ids are UUIDv7).
	After string
	// Cursor is the opaque cursor a client got as Page.NextCursor. Service.List decodes
	// it into After and clears it; stores read After only.
	Cursor string
}

// LogLine is one persisted log line of a run.
type LogLine struct {
	Seq     int64
	At      time.Time
	Level   string
	Message string
	Attrs   map[string]any
}

// AuditEntry is one audit record (SPEC §2.10); Details are redacted by the caller.
type AuditEntry struct {
	// Seq is the entry's position in the audit log, assigned by the store on append
	// (ignored there); ListAudit returns entries with Seq > after, oldest first.
	Seq     int64
	At      time.Time
	Actor   string
	Action  string
	RunID   string
	Details map[string]any
}
