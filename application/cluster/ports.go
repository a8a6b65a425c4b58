package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/lease"
	"github.com/sluicehq/sluice/domain/member"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
)

// Claimed is a run this member now owns.
type Claimed struct {
	ID          string
	Name        string
	Tenant      string
	Pool        string
	Epoch       int64 // lease_epoch after the claim: the fencing token
	Attempt     int
	MaxAttempts int
	Config      string
	Sealed      bool
	TimeoutSecs int
	ElapsedMS   int64 // running time of earlier attempts (timeout_secs counts across attempts)
	LogicalAt   time.Time
	RunDate     string
	CreatedAt   time.Time
	// StateKeyOverride is set by callers that know it; the default is state.Key(tenant, name).
	ShardCount int
	// Retry is the run's retry policy (SPEC §14.5); nil: a failure is final. A shard
	// retries under its run's policy.
	Retry *run.Retry
	// Traceparent is the submission's W3C traceparent (runs.Record.Traceparent): the
	// spans of this execution join that trace; "" starts a new one.
	Traceparent string
}

// Ref names an owned run and the epoch it is held at: the domain's lease reference, the
// one type every layer uses for it.
type Ref = lease.Ref

// Outcome is how an execution ended, written by Finish.
type Outcome struct {
	Status       string // completed | failed | cancelled
	ErrorCode    string
	ErrorMessage string
	Stats        Progress
	// Logs are the run's last persisted-log lines, written in Finish's transaction: a
	// reader that sees the terminal status has seen every line, and a short run costs
	// one transaction instead of two.
	Logs []LogLine
	// Tenant and Name are the run's pipeline key, when the caller knows it (from its
	// claim): the store takes the key's lock without reading them first.
	Tenant, Name string
	// Retry, on a failed outcome, is the domain's decision to retry (run.Run.Fail): the
	// store returns the run (or shard) to pending, claimable RetryDelay after now by the
	// database clock, with the attempt recorded failed — unless the run's cancel was
	// requested meanwhile, which ends it failed as the domain rules.
	Retry      bool
	RetryDelay time.Duration
}

// Progress are the counters of a running execution, in the history's one stats type
// (ElapsedMS is this attempt's running time).
type Progress = runs.Stats

// Store is what the claim and lease loops need from the history.
//
// Every write about an owned run is conditional on (owner, epoch) and an unexpired lease
// measured by the DATABASE clock; when it matches zero rows it returns run.ErrLeaseLost.
type Store interface {
	// Claim moves up to n pending runs of pools to running for owner in ONE statement,
	// oldest first, incrementing attempt and lease_epoch, setting the lease to
	// db_now + ttl and appending an open attempt record.
	Claim(ctx context.Context, owner Owner, pools []string, n int, ttl time.Duration) ([]Claimed, error)
	// Renew extends the leases of held in ONE statement and returns the refs it renewed;
	// a held ref missing from the answer has lost its lease.
	Renew(ctx context.Context, owner string, held []Ref, ttl time.Duration) ([]Ref, error)
	// Progress records counters of an owned run (fenced).
	Progress(ctx context.Context, owner string, ref Ref, p Progress) error
	// Finish ends an owned run (fenced) in ONE transaction: status, stats, error, the
	// last log lines (with the caps of AppendLogs), the attempt's outcome, the callback outbox row (when the run has a callback that
	// wants this status), and promotion of the pipeline key's oldest queued run.
	Finish(ctx context.Context, owner string, ref Ref, o Outcome, build runs.CallbackBuilder) error
	// HandBack returns an owned run to pending without spending an attempt (drain,
	// outage) — or ends it cancelled when its cancel was requested (fenced).
	HandBack(ctx context.Context, owner string, ref Ref, p Progress) error
	// Reclaim ends expired leases of any owner: cancel requested → cancelled; attempt <
	// maxAttempts → pending; else failed (poisoned). Returns what it did.
	Reclaim(ctx context.Context, build runs.CallbackBuilder) ([]Reclaimed, error)
	// NextExpiry answers how long, by the database clock, until the earliest lease of a
	// running run or shard of any member expires (≤ 0: one has expired already); ok is
	// false when no lease is held. The lease loop sleeps that long before its next
	// reclaim pass, so failover takes the TTL plus one pass, not up to TTL/3 more.
	NextExpiry(ctx context.Context) (left time.Duration, ok bool, err error)
	// ReclaimOrphans is Reclaim for runs owned by anyone but self, lease expired or not.
	// Only a server holding the exclusive history lock (single-node) may call it.
	ReclaimOrphans(ctx context.Context, self string, build runs.CallbackBuilder) ([]Reclaimed, error)
	// CancelRequested returns which of ids have their cancel flag set.
	CancelRequested(ctx context.Context, ids []string) ([]string, error)
	// AppendLogs persists log lines of a run, enforcing the per-run caps (10,000 lines,
	// 1 MiB; then one truncation marker).
	AppendLogs(ctx context.Context, runID string, lines []LogLine) error
	// Heartbeat upserts this member's row.
	Heartbeat(ctx context.Context, m MemberRow) error
	// MarkStopped records a clean stop of this member.
	MarkStopped(ctx context.Context, instanceID string) error
	// PendingByPool counts pending runs per pool.
	PendingByPool(ctx context.Context) (map[string]int, error)
	// Ping checks the history answers.
	Ping(ctx context.Context) error
}

// Finishing is one finish of a batch: the owned run, the epoch it is held at, and how
// it ended.
type Finishing struct {
	Ref     Ref
	Outcome Outcome
}

// FinishBatcher ends several owned runs in one transaction — a group commit: runs that end
// at about the same time share one BEGIN and one COMMIT (one WAL flush) instead of paying
// for one each, which is what bounds a member's run throughput on a busy history. The
// store implements it; a member without it finishes each run alone (Store.Finish).
type FinishBatcher interface {
	// FinishBatch does for every item of batch what Store.Finish does for one, all in ONE
	// transaction, each write still fenced by (owner, epoch). It answers one error per
	// item, in batch order: nil when the item committed; run.ErrLeaseLost for an item whose
	// fence failed — it wrote nothing, and the others still commit. When the transaction
	// fails for another reason, no item is left half written: each is then tried alone,
	// so one item the history refuses does not fail the others.
	FinishBatch(ctx context.Context, owner string, batch []Finishing, build runs.CallbackBuilder) []error
}

// DueStore answers when waiting retries come due. The store implements it.
type DueStore interface {
	// NextDue answers how long, by the database clock, until the earliest pending run or
	// shard that waits for its retry (not_before) becomes claimable (≤ 0: one is due);
	// ok is false when none waits.
	NextDue(ctx context.Context) (left time.Duration, ok bool, err error)
}

// Owner identifies the claiming member.
type Owner struct {
	InstanceID string
	Listen     string
}

// Reclaimed reports one reclaimed run.
type Reclaimed struct {
	ID      string
	Name    string // the run's name: the pipeline label of its metrics
	Outcome string // requeued | failed | cancelled
}

// LogLine is one log line to persist.
type LogLine struct {
	At      time.Time
	Level   string
	Message string
	Attrs   map[string]any
}

// MemberRow is this member's heartbeat.
type MemberRow struct {
	InstanceID     string
	Host           string
	PID            int
	Listen         string
	Version        string
	Pools          []string
	MaxConcurrent  int
	InFlight       int
	StateFormatMax int
	VaultFormatMax int
	Draining       bool
	StartedAt      time.Time
}

// OutboxStore is what the callback sender needs.
type OutboxStore interface {
	// ClaimOutbox leases up to n due callbacks to owner for lease.
	ClaimOutbox(ctx context.Context, owner string, n int, lease time.Duration) ([]OutboxItem, error)
	// OutboxDelivered deletes a delivered or finally failed callback.
	OutboxDelivered(ctx context.Context, id int64) error
	// OutboxRetry schedules another attempt.
	OutboxRetry(ctx context.Context, id int64, next time.Time, lastErr string) error
}

// OutboxItem is one callback to send. Its DeliveryID is stable across retries.
type OutboxItem struct {
	ID        int64
	RunID     string
	URL       string
	Payload   []byte
	Attempts  int // deliveries tried before this one; OutboxRetry adds one
	CreatedAt time.Time
}

// Notifications are wake-ups pushed by the history (PostgreSQL LISTEN/NOTIFY, SPEC §4.3,
// §4.6). They are a shortcut only: the member keeps polling every PollInterval, so a lost
// notification delays work by at most that much. Nil (SQLite, --poll-only) polls only.
type Notifications interface {
	// Wakeups delivers a value when claimable work may have appeared: the claim loop
	// claims at once.
	Wakeups() <-chan struct{}
	// Cancels delivers the id of a run whose cancel flag was set; the member fires that
	// run's token at once when it executes here. "" means the flags of every run
	// executing here must be read again (a notification that stood for several, or a
	// reconnect that may have missed some).
	Cancels() <-chan string
}

// RunChanges hears that a run changed in this member (runs.Watch): its log got lines or
// it ended. Followers of the run's log re-read the history at once instead of at their
// next poll. Called after the change is committed; it must not block.
type RunChanges interface {
	Changed(runID string)
}

// PoolTimeouts fails pending runs whose pool nobody serves (SPEC §5.5). The store
// implements it.
type PoolTimeouts interface {
	// FailUnservedPools fails, with run.CodePoolUnavailable, the pending runs of every
	// pool that no live (heartbeat within ttl by the database clock), non-draining member
	// serves and that has been unserved for at least wait: unserved since the latest
	// lease expiry among the members that advertised the pool (a clean stop counts as
	// the expiry), or since the run's creation when that is later. Each run ends in its
	// own transaction with its callback outbox row and the promotion of a queued sibling;
	// a run claimed or cancelled meanwhile is left alone. Pending shards starve with their
	// run's pool: past the same wait (counted from the planning when that is later) they
	// are cancelled with the reason, and their sharded run ends failed with the same code
	// once none of its shards runs. It returns the runs it failed.
	FailUnservedPools(ctx context.Context, ttl, wait time.Duration, build runs.CallbackBuilder) ([]PoolTimedOut, error)
}

// PoolTimedOut is a pending run failed because its pool stayed unserved, or a sharded run
// failed because its pending shards did.
type PoolTimedOut struct {
	ID   string
	Name string // the run's name, when the store knows it
	Pool string
}

// Roster reads the membership (SPEC §4.7). The store implements it.
type Roster interface {
	// Roster returns the rows of members that have not stopped cleanly, by instance id,
	// and the database clock at the read: heartbeat times and now come from the same
	// clock, so member.Live judges liveness the way leases are judged. A member without
	// pool support has nil Pools.
	Roster(ctx context.Context) (members []member.Member, now time.Time, err error)
}

// The ports below are what the member needs besides the history. Each is small so a test
// can stand in for it; the production implementations live in adapters and in
// application/execute.

// ConfigLoader turns a stored (raw) config into a validated pipeline, resolving its
// directives with this member's environment. execute.Loader implements it.
type ConfigLoader interface {
	Load(ctx context.Context, text []byte, opts execute.LoadOptions) (*pipeline.Config, error)
}

// Runner executes one job. *execute.Executor implements it. Run returns an error wrapping
// context.Canceled when ctx was cancelled, and an *execute.Failure for failures.
type Runner interface {
	Run(ctx context.Context, job execute.Job) (execute.Stats, error)
}

// StateOpener returns the bookmark store of a config whose state block names a store other
// than the history (state.type postgres). Nil refuses such configs with config_error.
type StateOpener func(ctx context.Context, st pipeline.State) (execute.StateStore, error)

// Deliverer POSTs one callback body to url and answers the HTTP status. delivery is the
// callback's id, the same for every retry of it, so a receiver can drop a replay (SPEC
// §14.3); the adapter signs it with a timestamp and the body, and checks the address
// policy on every resolved address at send time; an
// address the policy refuses is reported as an error wrapping ErrUndeliverable, which
// ends the callback without retries.
type Deliverer interface {
	Deliver(ctx context.Context, delivery, url string, body []byte) (status int, err error)
}

// ErrUndeliverable marks a callback that can never be delivered (its address is refused
// by policy); the sender drops it instead of retrying for a day.
var ErrUndeliverable = errors.New("callback undeliverable")

// Purger deletes what outlived its retention (runs.PurgeRequest) in bounded transactions,
// pausing between them so other writers get their turn. One member purges a history at
// a time: a call while another member's purge is under way answers Skipped at once.
// Each transaction has its own timeout, so a long backlog is worked off across passes
// without losing what was already deleted.
type Purger interface {
	Purge(ctx context.Context, req runs.PurgeRequest) (runs.PurgeResult, error)
}

// Clock is the time source. Decisions (throttling, outage cutoff, callback backoff) read
// it; it must carry a monotonic reading (time.Now does), because the outage cutoff is
// measured on the monotonic clock.
type Clock interface {
	Now() time.Time
}

// Metrics receives what the member counts. NopMetrics is the default.
type Metrics interface {
	// RunClaimed counts one claim; latency is submit → claim.
	RunClaimed(pool string, latency time.Duration)
	// RunFinished counts one terminal transition of a run of pipeline (its name) made here
	// or by reclaim; pipeline is "" where the history did not say which.
	RunFinished(pipeline, status, reason string)
	// RunDuration observes the running time of a run this member finished.
	RunDuration(pipeline, status string, ran time.Duration)
	// InFlight reports how many runs execute here.
	InFlight(n int)
	// Reclaimed counts one reclaimed run by outcome (requeued | failed | cancelled).
	Reclaimed(outcome string)
	// HistoryUnreachable reports whether this member's lease renewal is failing.
	HistoryUnreachable(unreachable bool)
	// ShardClaimed counts one claimed shard (SPEC §6.4).
	ShardClaimed()
	// ShardReclaimed counts one shard whose lease expired, by outcome (requeued | failed |
	// cancelled).
	ShardReclaimed(outcome string)
	// RunRetried counts one failed attempt of a run of pipeline (or of one of its shards)
	// sent back to pending for a retry (SPEC §14.5).
	RunRetried(pipeline string)
	// RunsPerClaim observes how many runs one claim statement took (at least 1): under a
	// backlog of short runs, what a run costs the history falls as this grows.
	RunsPerClaim(n int)
	// RunsPerFinish observes how many runs one finish transaction of the group commit
	// ended (at least 1).
	RunsPerFinish(n int)
}

// NopMetrics discards every measurement.
type NopMetrics struct{}

func (NopMetrics) RunClaimed(string, time.Duration)          {}
func (NopMetrics) RunFinished(string, string, string)        {}
func (NopMetrics) RunDuration(string, string, time.Duration) {}
func (NopMetrics) InFlight(int)                              {}
func (NopMetrics) Reclaimed(string)                          {}
func (NopMetrics) HistoryUnreachable(bool)                   {}
func (NopMetrics) ShardClaimed()                             {}
func (NopMetrics) ShardReclaimed(string)                     {}
func (NopMetrics) RunRetried(string)                         {}
func (NopMetrics) RunsPerClaim(int)                          {}
func (NopMetrics) RunsPerFinish(int)                         {}
