package runs

import (
	"context"
	"net"
	"time"

	"github.com/sluicehq/sluice/domain/pipeline"
)

// Store is what the runs use-cases need from the history.
//
// Errors: run.ErrNotFound for a missing id; run.ErrConflict for a violated uniqueness
// (run_key) or a state that forbids the change; run.ErrInvalidTransition where a status
// change is refused. Implementations translate driver errors at their edge.
type Store interface {
	// Create stores a new run (status pending or queued as given). When rec.Serial and
	// another run of the same (tenant, name) is queued, pending, running or sharded, the
	// run is stored queued instead; the decision and the insert are one transaction.
	// With idem non-nil the idempotency key is inserted in the same transaction; when
	// the key exists Create stores nothing and returns the existing entry with
	// created=false. When rec.RunKey is set and a run with the same (tenant, name,
	// run_key) exists, Create stores nothing and returns that run's id with created=false.
	Create(ctx context.Context, rec *Record, idem *Idempotency) (res CreateResult, err error)
	// CreateTick stores the run of a schedule tick, in one transaction that takes the
	// pipeline key's lock, checks the scheduler term (tick.Epoch; a moved-on term is
	// run.ErrLeaseLost and stores nothing), answers an existing tick of (schedule,
	// instant) as a replay (created=false, its run id, "" when it was skipped), decides
	// overlap from the key's queued or active runs (skip: the tick is recorded skipped
	// with the reason in Skipped and no run is stored; queue: the run is stored queued),
	// stores the run as Create does (rec.RunKey answers an existing run) and records the
	// tick with its outcome and run id.
	CreateTick(ctx context.Context, rec *Record, tick Tick) (res CreateResult, err error)
	// CreateTicks stores a batch of at most MaxTickBatch ticks, all of one term, in one
	// transaction, deciding each exactly as CreateTick called for them one after the other
	// would: it takes the pipeline keys' locks in one sorted order (two batches never
	// deadlock), checks the term once (a moved-on term is run.ErrLeaseLost and stores
	// nothing of the batch), then per tick answers an existing tick as a replay, decides
	// overlap (an earlier tick of the batch that created a run makes its schedule busy for
	// the later ones), refuses a run past its record's QueueLimit as Create does (in
	// res[i].Refused), stores the run and records the tick. res[i] answers batch[i]; a
	// created batch[i].Rec gets the status it was stored with.
	CreateTicks(ctx context.Context, batch []TickCreate) (res []CreateResult, err error)
	Get(ctx context.Context, id string) (*Record, error)
	List(ctx context.Context, f Filter) ([]*Record, error)
	// CountQueued counts pending + queued runs (the --max-queued-runs limit).
	CountQueued(ctx context.Context) (int, error)
	// CancelQueued moves a queued or pending run to cancelled in one conditional
	// statement, writing the callback outbox row in the same transaction, and returns
	// the updated record. A run in another status is returned unchanged with ok=false.
	CancelQueued(ctx context.Context, id string, build CallbackBuilder) (rec *Record, ok bool, err error)
	// RequestCancel sets the cancel flag of a running or sharded run. A sharded run's
	// pending shards are cancelled in the same transaction, which ends the run when none
	// of its shards is running: ended reports that this call ended it.
	RequestCancel(ctx context.Context, id string) (ended bool, err error)
	// Delete removes a terminal run with its labels, logs and sealed rows;
	// run.ErrConflict when it is not terminal.
	Delete(ctx context.Context, id string) error
	// Shards returns up to limit shards of the run with index > after, by index (none for
	// a run that was never split).
	Shards(ctx context.Context, id string, after, limit int) ([]ShardRecord, error)
	// Logs returns up to limit lines with seq > after.
	Logs(ctx context.Context, id string, after int64, limit int) ([]LogLine, error)
	// MarkFollowed sets Record.Followed of a run that has not ended, so that its terminal
	// transition is announced to the followers on every member; a run that ended, or
	// none of that id, is left as it is without error. A finish in progress is either
	// before the mark (the follower's next read sees the end) or after it (the finish
	// announces).
	MarkFollowed(ctx context.Context, id string) error
	// Audit appends an audit entry.
	Audit(ctx context.Context, e AuditEntry) error
	ListAudit(ctx context.Context, after int64, limit int) ([]AuditEntry, error)
	// Purge deletes what req says has outlived its retention, in transactions of at most
	// req.BatchSize runs (see PurgeRequest); it answers what it deleted, or Skipped when
	// another member's purge is under way.
	Purge(ctx context.Context, req PurgeRequest) (PurgeResult, error)
}

// MaxTickBatch bounds a CreateTicks batch: a transaction's statements stay within the
// databases' parameter limits, and the writer is never held for long on SQLite.
const MaxTickBatch = 250

// TickCreate is one tick of a CreateTicks batch: the run the funnel built for it.
type TickCreate struct {
	Rec  *Record
	Tick Tick
}

// Idempotency is an idempotency key to claim with a new run.
type Idempotency struct {
	Scope       string
	Key         string
	Fingerprint string
}

// CreateResult tells what Create did.
type CreateResult struct {
	Created bool
	RunID   string
	Status  string
	// Fingerprint of the existing key when Created is false because of an idempotency key;
	// "" when it was the run key that matched.
	Fingerprint string
	// RunDeleted is true when the idempotency key's run no longer exists.
	RunDeleted bool
	// Skipped is the reason CreateTick recorded its tick skipped; "" otherwise.
	Skipped string
	// Refused is why CreateTicks stored neither this tick nor its run: ErrQueueFull when
	// the record's QueueLimit was reached (counted with the batch's earlier runs). The
	// tick stays due; nil otherwise.
	Refused error
}

// CallbackInput is what a callback payload is built from; the store reads it inside the
// transaction of the terminal transition.
type CallbackInput struct {
	RunID, Name, Status, Pool, Tenant, RunKey string
	Labels                                    map[string]string
	StartedAt, FinishedAt                     time.Time
	Stats                                     Stats
	ErrorCode, ErrorMessage                   string
	Callback                                  *Callback // the run's stored settings; nil when none
}

// CallbackBuilder turns a terminal transition into an outbox row: ok=false when the run
// has no callback or its callback does not want this status. The store calls it inside
// the transaction, so the outbox row commits (or rolls back) with the transition.
type CallbackBuilder func(in CallbackInput) (url string, payload []byte, ok bool)

// Waker nudges the claim loop after work was created (in-process channel single-node;
// NOTIFY on PostgreSQL clusters).
type Waker interface {
	Wake()
}

// Canceller fires the cancel token of a run executing in this process.
type Canceller interface {
	// CancelLocal returns true when the run executes here and its token was fired.
	CancelLocal(runID string) bool
}

// Metrics counts the runs a request ends at once — a cancel of a queued, pending or
// sharded run — in sluice_serve_runs_total (SPEC §10). Runs that end while executing are
// counted by the member that settles them.
type Metrics interface {
	// RunFinished counts one ended run of pipeline (the run's name).
	RunFinished(pipeline, status, reason string)
}

// Clock is the time source; tests pass a fake.
type Clock interface {
	Now() time.Time
}

// Resolver resolves a callback host to the addresses a callback would be sent to.
// bootstrap adapts net.Resolver; tests pass a fake.
type Resolver interface {
	LookupIP(ctx context.Context, host string) ([]net.IP, error)
}

// PoolAdmission says which pools can take new runs right now (SPEC §5.4): the pools of
// live, non-draining members. A non-clustered server serves only its own pools
// (StaticPools); a clustered one asks its membership.
type PoolAdmission interface {
	Served(ctx context.Context) ([]string, error)
}

// Redactor masks values registered as secrets (directive values, sealed params).
type Redactor interface {
	Redact(s string) string
}

// Proposer records a run request as a change request instead of creating the run (SPEC
// §9.5). Submit calls it after every check a submission gets short of storing the run,
// with the run's name and pool decided; the id it returns answers the caller.
type Proposer interface {
	Propose(ctx context.Context, req SubmitRequest, name, pool string) (id string, err error)
}

// Confinement checks what a config's connectors would reach (SPEC §14.1) before the run
// is stored: literal paths, hosts and SQL databases, judged by the server's confinement
// rules. Values that still hold a directive are left to the connector, which checks
// them again when it opens. Refusals wrap reach.ErrPathRefused, reach.ErrHostRefused or
// reach.ErrHistoryRefused.
type Confinement interface {
	CheckTargets(ctx context.Context, cfg *pipeline.Config) error
}
