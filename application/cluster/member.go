package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/lease"
	"github.com/sluicehq/sluice/domain/secret"
	"github.com/sluicehq/sluice/domain/state"
)

// Defaults for the Config fields whose zero value means "use the default".
const (
	DefaultPool                 = "default"
	DefaultRetainTerminal       = 7 * 24 * time.Hour
	DefaultIdempotencyRetention = 24 * time.Hour
	DefaultRetainAudit          = 365 * 24 * time.Hour
	DefaultPurgeInterval        = 5 * time.Minute
	DefaultOutboxInterval       = time.Second
)

// Config is how one member runs. Flags are validated by the caller (bootstrap); New only
// refuses values that would make the loops misbehave.
type Config struct {
	InstanceID string // new per process start
	Listen     string // the address peers and the runs resource show
	Host       string
	Version    string
	PID        int
	Pools      []string // the pools this member serves; empty = [default]
	// MaxConcurrent bounds the runs executing here at once (--max-concurrent-runs).
	MaxConcurrent int
	// ClaimBatch bounds the runs one claim statement takes; 0 = all free capacity.
	ClaimBatch   int
	LeaseTTL     time.Duration // --lease-ttl-secs
	PollInterval time.Duration // --cluster-poll-secs: claim and cancel polling
	// MaxAttempts is the attempt cap (--cluster-max-attempts) shown in logs when a claimed
	// run carries none; the cap itself is stored with each run at submit.
	MaxAttempts   int
	ShutdownGrace time.Duration // 0 allowed: hand back at once
	ShutdownKill  time.Duration
	// AllowFileDirs are the only directories ${file:} may read (--allow-file-dir).
	AllowFileDirs []string
	Zone          *time.Location // run_date zone (--timezone); nil = UTC
	// Exclusive is set by a single-node server holding the history lock: at Start it
	// reclaims every run a previous process left running, so they resume at once instead
	// of waiting for their leases to expire.
	Exclusive bool
	// StateFormatMax is the highest bookmark format this binary reads, advertised in the
	// membership row (§4.10); 0 = state.FormatMax. VaultFormatMax is the sealer's
	// (runs.Sealer.FormatMax); 0 advertises nothing, which peers read as format 1.
	StateFormatMax int
	VaultFormatMax int
	// RetainTerminal is --retain-terminal-runs-secs; 0 = 7 days.
	RetainTerminal time.Duration
	// IdempotencyRetention is --idempotency-retention-secs; 0 = 24 h.
	IdempotencyRetention time.Duration
	// RetainAudit is --retain-audit-secs: audit entries and ended leader terms older than
	// it are purged; 0 = 1 year.
	RetainAudit time.Duration
	// PurgeBatch bounds the runs one purge transaction deletes; 0 = runs.MaxPurgeBatch.
	PurgeBatch     int
	PurgeInterval  time.Duration // 0 = 5 min
	OutboxInterval time.Duration // how often due callbacks are looked for; 0 = 1 s
	// Sharding splits claimed runs whose config asks for shards (shard.count > 1) into
	// shards that every member claims (--cluster, SPEC §6). Without it such a run executes
	// whole, with a warning in its log. Shards found in the history are claimed either way.
	Sharding bool
	// PoolWaitTimeout is --pool-wait-timeout-secs: pending runs of a pool that no live
	// member has served for this long fail with pool_unavailable (SPEC §5.5). 0 = wait
	// forever. It needs Deps.PoolTimeouts.
	PoolWaitTimeout time.Duration
	// FinishTxns is how many finish transactions may be in flight with Deps.Finishes;
	// 0 = DefaultFinishTxns.
	FinishTxns int
}

// Deps are the ports a member drives. Outbox+Deliverer and Purger are optional: without
// them the callback sender or the purge loop does not run.
type Deps struct {
	Store Store
	// Finishes, when set, ends runs in batches (a group commit, see finishGroup); nil
	// ends each run in its own transaction (Store.Finish).
	Finishes  FinishBatcher
	Outbox    OutboxStore
	Deliverer Deliverer
	Purger    Purger
	Loader    ConfigLoader
	Runner    Runner
	// State keeps bookmarks of incremental runs whose state type is history (the default).
	State execute.StateStore
	// OpenState serves other state types; nil refuses them with config_error.
	OpenState StateOpener
	// Callbacks builds the outbox row of a terminal transition (runs.CallbackPayload);
	// nil writes none.
	Callbacks runs.CallbackBuilder
	// Notifications wake the claim loop and fire cancel tokens as soon as the history
	// announces work or a cancel (PostgreSQL LISTEN); nil polls only (SQLite,
	// --poll-only). Polling every PollInterval stays on either way.
	Notifications Notifications
	// Changes hears of every run this member persisted log lines of or ended, after the
	// commit, so followers of the run's log see it at once; nil tells nobody.
	Changes RunChanges
	// Shards keeps the shards of sharded runs; nil claims no shards and runs every run
	// whole. Planner splits a source into shards; both are needed for Config.Sharding.
	Shards  ShardStore
	Planner Planner
	// PoolTimeouts fails runs of pools unserved past Config.PoolWaitTimeout; required
	// when that is set, unused otherwise.
	PoolTimeouts PoolTimeouts
	Metrics      Metrics          // nil = NopMetrics
	Clock        Clock            // nil = the system clock
	Log          *slog.Logger     // nil = discard
	Redactor     *secret.Redactor // nil = nothing registered to redact
	// Sealer opens sealed configs and secrets of claimed runs (SPEC §7.2, §7.3); nil
	// fails every sealed run with vault_key_missing. A member without a key passes a
	// keyless sealer that can still name the key a ciphertext needs.
	Sealer runs.Sealer
	// Secrets reads a claimed run's sealed secret values; nil: runs holding ${sealed:N}
	// tokens fail with vault_key_missing.
	Secrets SecretSource
	// Audit records the system transitions (reclaim, poison, pool timeout, hand-back)
	// with this member as actor; nil records nothing.
	Audit Auditor
	// Withhold removes the row data a failed run's message may quote (a key's values, a
	// value that did not convert) before it is logged and stored; nil keeps messages.
	Withhold func(msg string) string
	// Due tells the claim loop when the earliest waiting retry comes due, so it claims
	// the retry then rather than at its next poll; nil: waiting retries wait for a poll.
	Due DueStore
	// Draw is the jitter of retry delays, uniform in [0, 1); nil = math/rand/v2.
	Draw func() float64
	// Tracer opens the spans of claims, run attempts, shards and finishes (SPEC §14.6)
	// under the traceparent stored with each run; nil: execute.NopTracer.
	Tracer execute.Tracer
	// Events are told of each loop step (tests wait on them); zero = nothing told.
	Events Events
}

// SecretSource reads the sealed secret values of a run, index n for its ${sealed:n}
// token (the history keeps them until the run is terminal).
type SecretSource interface {
	SealedSecrets(ctx context.Context, runID string) ([][]byte, error)
}

// Member executes runs: it claims them, runs them, keeps their leases, hands them back on
// drain or outage, sends callbacks and purges old runs. Single-node serve runs one.
type Member struct {
	cfg     Config
	deps    Deps
	log     *slog.Logger
	clock   Clock
	metrics Metrics
	owner   Owner

	wake chan struct{} // capacity 1: a pending nudge of the claim loop
	// shardsHint says pending shards may exist (see claimOnce): set by a notification, by
	// the poll, by a claim that found shards and by planning here. It starts set.
	shardsHint atomic.Bool
	quitClaim  chan struct{} // closed once: stop claiming (drain, stop)
	quitOnce   sync.Once
	claimDone  chan struct{} // closed when the claim loop has returned
	skipGrace  chan struct{} // closed by a second Drain
	overdue    int           // reclaim passes in a row that left an expired lease (lease loop only)
	skipOnce   sync.Once

	mu           sync.Mutex
	started      bool
	execs        map[string]*execution // runs executing (or settling) here
	parked       map[string]parkedRun  // stopped by an outage, awaiting hand-back
	changed      chan struct{}         // closed and replaced whenever execs shrinks
	draining     bool
	healthy      bool
	renewFailing bool
	lastOK       time.Time // when the last successful renewal was SENT
	due          time.Time // when the earliest known retry comes due; zero: none known
	startedAt    time.Time
	drainDone    chan struct{} // non-nil once a drain started; closed when it ended
	drainErr     error

	root       context.Context // lives until Stop; never the context Start was given
	cancelRoot context.CancelFunc
	loops      sync.WaitGroup
	stopOnce   sync.Once
	finishes   *finishGroup // nil without Deps.Finishes
}

// New checks cfg and deps and returns a member that is not started yet.
func New(cfg Config, deps Deps) (*Member, error) {
	if err := validate(cfg, deps); err != nil {
		return nil, err
	}
	if len(cfg.Pools) == 0 {
		cfg.Pools = []string{DefaultPool}
	}
	if cfg.ClaimBatch <= 0 || cfg.ClaimBatch > cfg.MaxConcurrent {
		cfg.ClaimBatch = cfg.MaxConcurrent
	}
	if cfg.Zone == nil {
		cfg.Zone = time.UTC
	}
	if cfg.StateFormatMax == 0 {
		cfg.StateFormatMax = state.FormatMax
	}
	cfg.RetainTerminal = orDefault(cfg.RetainTerminal, DefaultRetainTerminal)
	cfg.IdempotencyRetention = orDefault(cfg.IdempotencyRetention, DefaultIdempotencyRetention)
	cfg.RetainAudit = orDefault(cfg.RetainAudit, DefaultRetainAudit)
	cfg.PurgeInterval = orDefault(cfg.PurgeInterval, DefaultPurgeInterval)
	cfg.OutboxInterval = orDefault(cfg.OutboxInterval, DefaultOutboxInterval)
	if deps.Metrics == nil {
		deps.Metrics = NopMetrics{}
	}
	if deps.Clock == nil {
		deps.Clock = systemClock{}
	}
	if deps.Tracer == nil {
		deps.Tracer = execute.NopTracer{}
	}
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	if deps.Redactor == nil {
		deps.Redactor = secret.NewRedactor()
	}
	if deps.Callbacks == nil {
		deps.Callbacks = func(runs.CallbackInput) (string, []byte, bool) { return "", nil, false }
	}
	root, cancel := context.WithCancel(context.Background())
	m := &Member{
		cfg:        cfg,
		deps:       deps,
		log:        deps.Log.With("instance_id", cfg.InstanceID),
		clock:      deps.Clock,
		metrics:    deps.Metrics,
		owner:      Owner{InstanceID: cfg.InstanceID, Listen: cfg.Listen},
		wake:       make(chan struct{}, 1),
		quitClaim:  make(chan struct{}),
		claimDone:  make(chan struct{}),
		skipGrace:  make(chan struct{}),
		execs:      map[string]*execution{},
		parked:     map[string]parkedRun{},
		changed:    make(chan struct{}),
		root:       root,
		cancelRoot: cancel,
	}
	m.shardsHint.Store(true)
	m.finishes = m.newFinishGroup()
	return m, nil
}

func validate(cfg Config, deps Deps) error {
	var errs []error
	if cfg.InstanceID == "" {
		errs = append(errs, errors.New("cluster: InstanceID is empty"))
	}
	if cfg.MaxConcurrent < 1 {
		errs = append(errs, fmt.Errorf("cluster: --max-concurrent-runs must be at least 1, got %d", cfg.MaxConcurrent))
	}
	if cfg.LeaseTTL <= 0 {
		errs = append(errs, fmt.Errorf("cluster: --lease-ttl-secs must be positive, got %s", cfg.LeaseTTL))
	}
	if cfg.PollInterval <= 0 {
		errs = append(errs, fmt.Errorf("cluster: --cluster-poll-secs must be positive, got %s", cfg.PollInterval))
	}
	if cfg.ShutdownGrace < 0 || cfg.ShutdownKill < 0 {
		errs = append(errs, errors.New("cluster: --shutdown-grace-secs and --shutdown-kill-secs must not be negative"))
	}
	if deps.Store == nil || deps.Loader == nil || deps.Runner == nil {
		errs = append(errs, errors.New("cluster: Deps.Store, Deps.Loader and Deps.Runner are required"))
	}
	if cfg.PoolWaitTimeout < 0 {
		errs = append(errs, fmt.Errorf("cluster: --pool-wait-timeout-secs must not be negative, got %s", cfg.PoolWaitTimeout))
	}
	if cfg.PoolWaitTimeout > 0 && deps.PoolTimeouts == nil {
		errs = append(errs, errors.New("cluster: --pool-wait-timeout-secs needs Deps.PoolTimeouts"))
	}
	if cfg.Sharding && (deps.Shards == nil || deps.Planner == nil) {
		errs = append(errs, errors.New("cluster: Config.Sharding needs Deps.Shards and Deps.Planner"))
	}
	if (deps.Outbox == nil) != (deps.Deliverer == nil) {
		errs = append(errs, errors.New("cluster: Deps.Outbox and Deps.Deliverer go together"))
	}
	return errors.Join(errs...)
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// reclaimOrphanShards hands the shards a cluster left running back to pending (or ends
// them by the reclaim rules) at the start of a single server: they would otherwise wait
// for their leases to expire before this server, the only one left, could run them.
func (m *Member) reclaimOrphanShards(ctx context.Context) error {
	if m.deps.Shards == nil {
		return nil
	}
	sctx, cancel := m.stmt(ctx)
	got, err := m.deps.Shards.ReclaimOrphanShards(sctx, m.cfg.InstanceID, m.deps.Callbacks)
	cancel()
	if err != nil {
		return fmt.Errorf("cluster: reclaim shards left running by an earlier process: %w", err)
	}
	m.countShardReclaim(got)
	return nil
}

// Start reclaims orphans (Exclusive only), heartbeats once and starts the loops. The loops
// outlive ctx, which only bounds the start itself; Drain and Stop end them.
func (m *Member) Start(ctx context.Context) error {
	m.mu.Lock()
	if m.started {
		m.mu.Unlock()
		return errors.New("cluster: member already started")
	}
	m.started = true
	m.startedAt = m.clock.Now()
	m.mu.Unlock()

	if m.cfg.Exclusive {
		sctx, cancel := m.stmt(ctx)
		got, err := m.deps.Store.ReclaimOrphans(sctx, m.cfg.InstanceID, m.deps.Callbacks)
		cancel()
		if err != nil {
			m.mu.Lock()
			m.started = false // nothing runs yet: Start may be tried again
			m.mu.Unlock()
			return fmt.Errorf("cluster: reclaim runs left running by an earlier process: %w", err)
		}
		m.countReclaimed(got)
		if err := m.reclaimOrphanShards(ctx); err != nil {
			m.mu.Lock()
			m.started = false
			m.mu.Unlock()
			return err
		}
	}
	sent := m.clock.Now()
	sctx, cancel := m.stmt(ctx)
	err := m.deps.Store.Heartbeat(sctx, m.memberRow())
	cancel()
	m.mu.Lock()
	m.healthy = err == nil
	m.lastOK = sent
	m.mu.Unlock()
	if err != nil {
		m.log.Warn("first heartbeat failed; claiming waits until the history answers", "error", m.redact(err.Error()))
	}

	m.spawn(func() { m.claimLoop(); close(m.claimDone) })
	m.spawn(m.leaseLoop)
	m.spawn(m.outageWatch)
	if m.deps.Notifications != nil {
		m.spawn(m.notifyLoop)
	}
	if m.deps.Outbox != nil {
		m.spawn(m.outboxLoop)
	}
	if m.deps.Purger != nil {
		m.spawn(m.purgeLoop)
	}
	return nil
}

func (m *Member) spawn(f func()) {
	m.loops.Add(1)
	go func() {
		defer m.loops.Done()
		f()
	}()
}

// Wake nudges the claim loop without blocking (runs.Waker).
func (m *Member) Wake() {
	select {
	case m.wake <- struct{}{}:
	default:
	}
}

// CancelLocal fires the cancel token of a run executing here, or of every shard of it
// executing here (runs.Canceller). Each stops at a page boundary and ends cancelled.
func (m *Member) CancelLocal(id string) bool {
	m.mu.Lock()
	var list []*execution
	for _, e := range m.execs {
		if e.claim.ID == id {
			list = append(list, e)
		}
	}
	m.mu.Unlock()
	for _, e := range list {
		e.stop(errCancelRequested)
	}
	return len(list) > 0
}

// InFlight counts the runs executing (or settling) here.
func (m *Member) InFlight() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.execs)
}

// Draining reports whether the member stopped claiming for a shutdown.
func (m *Member) Draining() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.draining
}

// Healthy reports whether the last lease renewal and heartbeat succeeded.
func (m *Member) Healthy() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.healthy
}

// Stop ends the member: it stops claiming, stops what still executes as a drain with no
// grace would, ends the loops and records a clean stop. Call Drain first for a graceful
// shutdown; Stop after Drain only ends the loops.
func (m *Member) Stop() {
	m.stopOnce.Do(func() {
		m.mu.Lock()
		started := m.started
		m.draining = true
		m.mu.Unlock()
		m.stopClaiming()
		if started {
			<-m.claimDone
			m.stopAll(errDraining)
			m.waitIdle(m.cfg.ShutdownKill, nil)
		}
		m.cancelRoot()
		m.loops.Wait()
		if !started {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), lease.StatementTimeout(m.cfg.LeaseTTL))
		defer cancel()
		if err := m.deps.Store.MarkStopped(ctx, m.cfg.InstanceID); err != nil {
			m.log.Warn("recording the clean stop failed", "error", m.redact(err.Error()))
		}
	})
}

func (m *Member) stopClaiming() {
	m.quitOnce.Do(func() { close(m.quitClaim) })
}

// stmt bounds one history statement by the lease statement timeout (§4.4).
func (m *Member) stmt(parent context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(parent, lease.StatementTimeout(m.cfg.LeaseTTL))
}

// Row is this member's membership row as the next heartbeat will write it, with the
// current in-flight count.
func (m *Member) Row() MemberRow {
	row := m.memberRow()
	row.Pools = slices.Clone(row.Pools)
	return row
}

func (m *Member) memberRow() MemberRow {
	m.mu.Lock()
	defer m.mu.Unlock()
	return MemberRow{
		InstanceID:     m.cfg.InstanceID,
		Host:           m.cfg.Host,
		PID:            m.cfg.PID,
		Listen:         m.cfg.Listen,
		Version:        m.cfg.Version,
		Pools:          m.cfg.Pools,
		MaxConcurrent:  m.cfg.MaxConcurrent,
		InFlight:       len(m.execs),
		StateFormatMax: m.cfg.StateFormatMax,
		VaultFormatMax: m.cfg.VaultFormatMax,
		Draining:       m.draining,
		StartedAt:      m.startedAt,
	}
}

func (m *Member) redact(s string) string { return m.deps.Redactor.Redact(s) }

// stopAll fires the token of every run executing here with cause and answers how many
// were not stopped before.
func (m *Member) stopAll(cause error) int {
	m.mu.Lock()
	list := make([]*execution, 0, len(m.execs))
	for _, e := range m.execs {
		if e.ctx.Err() == nil {
			list = append(list, e)
		}
	}
	m.mu.Unlock()
	for _, e := range list {
		e.stop(cause)
	}
	return len(list)
}

// waitIdle waits until nothing executes here, for at most d (d < 0: no limit) or until
// abort is closed. It reports whether the member became idle.
func (m *Member) waitIdle(d time.Duration, abort <-chan struct{}) bool {
	var deadline <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		deadline = t.C
	}
	for {
		m.mu.Lock()
		n, changed := len(m.execs), m.changed
		m.mu.Unlock()
		if n == 0 {
			return true
		}
		select {
		case <-changed:
		case <-deadline:
			return false
		case <-abort:
			return false
		}
	}
}
