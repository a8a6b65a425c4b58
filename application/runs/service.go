package runs

import (
	"context"
	"log/slog"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/callback"
	"github.com/sluicehq/sluice/domain/pool"
)

// Defaults applied by New to zero Config fields.
const (
	DefaultMaxAttempts          = 3
	DefaultIdempotencyRetention = 24 * time.Hour
	// resolveTimeout bounds the DNS lookup of a callback host at submit.
	resolveTimeout = 5 * time.Second
)

// Deps are the ports the run use-cases call. Store and Loader are required; the rest
// have working defaults (see New).
type Deps struct {
	Store     Store
	Loader    *execute.Loader
	Waker     Waker     // nil: nobody to wake (tests)
	Canceller Canceller // nil: no run executes in this process
	Clock     Clock     // nil: the system clock
	Resolver  Resolver  // nil: the system resolver
	// Admission answers which pools can take new runs; nil: StaticPools(Config.Pools).
	Admission PoolAdmission
	// Capabilities refuses what a live member of an older release could not execute
	// (SPEC §4.10); nil: no check (a non-clustered server has no peers). A clustered
	// server passes its *ClusterAdmission here too.
	Capabilities Capabilities
	Log          *slog.Logger // nil: discard
	Redactor     Redactor     // nil: nothing is registered as secret
	// NewID makes run ids; nil: UUIDv7 stamped with the run's created_at (time-ordered,
	// so newest-first lists page by id and time windows are id ranges: IDLead).
	NewID func() (string, error)
	// Sealer is the vault (--vault-key); nil: configs are stored as submitted and secret
	// params are refused with ErrVaultKeyRequired (SPEC §7.3, §7.4).
	Sealer Sealer
	// Proposer records change requests (SPEC §9.5); nil: a request that must be
	// proposed is refused.
	Proposer Proposer
	// Metrics counts runs a cancel ends at once; nil: not counted (tests).
	Metrics Metrics
	// Confinement refuses a config whose literal paths or hosts the server does not
	// allow, or that targets the history (SPEC §14.1); nil: nothing is confined.
	Confinement Confinement
	// Tracer opens the submit span and names the traceparent stored with a run (SPEC
	// §14.6); nil: execute.NopTracer, which still stores a traceparent the caller's
	// context carries.
	Tracer execute.Tracer
	// Watch hears of runs a cancel ends at once, so followers of their logs see the end
	// without polling; nil tells nobody.
	Watch *Watch
}

// Config is the server settings the run use-cases read.
type Config struct {
	// Pools this server serves (--pool); default [default]. Directives of a config are
	// resolved at submit only when its pool is one of these (SPEC §4.2).
	Pools []string
	// MaxQueued is --max-queued-runs; 0 means no limit.
	MaxQueued int
	// QueryTimeout is --query-timeout-secs: each history read serving a request is
	// cancelled past it (ErrQueryTimeout); 0 means none.
	QueryTimeout time.Duration
	// MaxAttempts is --cluster-max-attempts, stored on every new run; default 3.
	MaxAttempts int
	// AllowFileDirs is --allow-file-dir: where ${file:} may read in a submitted config.
	AllowFileDirs []string
	// CallbackAllowHosts is --callback-allow-host. bootstrap should validate it with
	// callback.NewPolicy at start; an invalid entry makes every submission with a
	// callback fail.
	CallbackAllowHosts []string
	// Zone is --timezone, the zone of run_date; default UTC.
	Zone *time.Location
	// IdempotencyRetention is --idempotency-retention-secs; default 24 h.
	IdempotencyRetention time.Duration
	// Draining reports whether the server is shutting down; nil: never.
	Draining func() bool
	// RequireApproval is --require-approval run: run requests from people and agents
	// become change requests (SPEC §9.5); schedules and backfills still run directly.
	RequireApproval bool
}

// Service holds the run use-cases. It is safe for concurrent use.
type Service struct {
	deps      Deps
	cfg       Config
	policy    callback.Policy
	policyErr error
	ids       *v7Source
	// newID makes the id of a run created at the given time (Deps.NewID, or ids).
	newID func(time.Time) (string, error)
	queue *queueLimit
}

// New returns the run use-cases over deps with cfg's settings.
func New(deps Deps, cfg Config) *Service {
	if deps.Clock == nil {
		deps.Clock = systemClock{}
	}
	if deps.Resolver == nil {
		deps.Resolver = systemResolver{}
	}
	if deps.Log == nil {
		deps.Log = slog.New(slog.DiscardHandler)
	}
	if deps.Redactor == nil {
		deps.Redactor = noRedactor{}
	}
	if deps.Tracer == nil {
		deps.Tracer = execute.NopTracer{}
	}
	if len(cfg.Pools) == 0 {
		cfg.Pools = []string{pool.Default}
	}
	cfg.Pools = slices.Clone(cfg.Pools)
	if deps.Admission == nil {
		deps.Admission = StaticPools(cfg.Pools)
	}
	if cfg.MaxAttempts < 1 {
		cfg.MaxAttempts = DefaultMaxAttempts
	}
	if cfg.Zone == nil {
		cfg.Zone = time.UTC
	}
	if cfg.IdempotencyRetention <= 0 {
		cfg.IdempotencyRetention = DefaultIdempotencyRetention
	}
	s := &Service{deps: deps, cfg: cfg, ids: &v7Source{}}
	s.queue = &queueLimit{max: cfg.MaxQueued, count: deps.Store.CountQueued, now: deps.Clock.Now}
	s.policy, s.policyErr = callback.NewPolicy(cfg.CallbackAllowHosts)
	s.newID = func(time.Time) (string, error) { return s.deps.NewID() }
	if s.deps.NewID == nil {
		s.newID = s.ids.nextAt
	}
	return s
}

// StaticPools is the admission of a non-clustered server: it serves exactly its own
// pools and refuses the others (SPEC §5.4).
type StaticPools []string

// Served returns the configured pools.
func (p StaticPools) Served(context.Context) ([]string, error) { return slices.Clone(p), nil }

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

type systemResolver struct{}

func (systemResolver) LookupIP(ctx context.Context, host string) ([]net.IP, error) {
	return net.DefaultResolver.LookupIP(ctx, "ip", host)
}

type noRedactor struct{}

func (noRedactor) Redact(s string) string { return s }

func (s *Service) draining() bool { return s.cfg.Draining != nil && s.cfg.Draining() }

func (s *Service) now() time.Time { return s.deps.Clock.Now().UTC() }

// v7Source makes UUIDv7 ids with the standard library (the application layer imports no
// uuid package). Ids made by one process are strictly increasing even within one
// millisecond, so a page boundary never splits runs created together out of order.
type v7Source struct {
	mu   sync.Mutex
	last [16]byte
}
