package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"go.uber.org/fx"

	"github.com/sluicehq/sluice/adapters/confine"
	"github.com/sluicehq/sluice/adapters/connectors"
	"github.com/sluicehq/sluice/adapters/connectors/builtin"
	apihttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/adapters/metrics"
	"github.com/sluicehq/sluice/adapters/notify"
	"github.com/sluicehq/sluice/adapters/statepg"
	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/adapters/webhook"
	"github.com/sluicehq/sluice/application/approvals"
	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/secret"
	"github.com/sluicehq/sluice/domain/state"
)

// Timeouts of the server's own plumbing.
const (
	openTimeout       = 30 * time.Second // connecting to the history
	readHeaderTimeout = 10 * time.Second
	// httpQuiet is how long in-flight requests get once the drain is over; followed log
	// streams are then cut so they cannot hold the process open.
	httpQuiet = 3 * time.Second
)

// identity is who this process is in the history and in its logs.
type identity struct {
	InstanceID string // a new UUIDv7 per process start
	Host       string
	PID        int
	Version    string
}

// apiListener is the bound socket of --listen. It is bound before the graph is built, so
// the member advertises the address actually bound (port 0 picks one) to its peers.
type apiListener struct{ net.Listener }

// fatal carries an error that ends a started server (the HTTP listener failing).
type fatal chan error

// report sends err without blocking: the first one is enough to stop.
func (f fatal) report(err error) {
	select {
	case f <- err:
	default:
	}
}

// serveGraph is the dependency graph of `sluice serve`. Hooks run in the order they are
// registered on start and in reverse on stop, which gives the shutdown of SPEC §2.8:
// the scheduler resigns its leadership, drain (runs finish or are handed back while the
// API still answers GETs and cancels),
// then the HTTP server, the member's loops and its clean-stop record, the exclusive
// lock, and the history connection last.
func serveGraph(s *serveSettings, p *process, log *slog.Logger, mlog memberLog, id identity, ln apiListener, f fatal) fx.Option {
	return fx.Options(
		fx.Supply(s, p, log, mlog, id, ln, f),
		fx.Provide(
			provideStore,
			newDrainFlag,
			provideListener,
			provideView,
			provideOutbound,
			provideConfinement,
			provideRegistry,
			provideLoader,
			provideExecutor,
			provideWebhook,
			provideMetrics,
			provideTracer,
			provideStateStores,
			// One watch per server: the member tells it of runs that changed, the log
			// stream follows it, so a waiting client hears a run's end at once.
			runs.NewWatch,
			provideMember,
			provideRuns,
			provideTemplates,
			provideSchedules,
			provideHealth,
			provideMCP,
			provideHandler,
		),
		fx.Invoke(
			startHistory,
			startMember,
			startHTTP,
			registerDrain,
			startScheduler,
		),
	)
}

func newDrainFlag() *drainFlag { return &drainFlag{} }

// provideStore connects to the history; migrations and the lock wait for start.
func provideStore(lc fx.Lifecycle, s *serveSettings, log *slog.Logger) (*store.Store, error) {
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	st, err := store.Open(ctx, s.History, storeOptions(s, log))
	if err != nil {
		return nil, err
	}
	lc.Append(fx.Hook{OnStop: func(context.Context) error { return st.Close() }})
	return st, nil
}

// startHistory migrates (unless --no-migrate), refuses a schema this binary cannot use,
// and, without --cluster, takes the exclusive lock that keeps a second server off this
// history (§2.1). Clustered members share it instead (lockHistory).
func startHistory(lc fx.Lifecycle, st *store.Store, s *serveSettings, id identity) {
	var release func()
	lc.Append(fx.Hook{
		OnStart: func(ctx context.Context) error {
			if !s.NoMigrate {
				if err := st.Migrate(ctx); err != nil {
					return err
				}
			}
			if err := st.CheckSchema(ctx); err != nil {
				return err
			}
			rel, err := lockHistory(ctx, st, s, id)
			if err != nil {
				return err
			}
			release = rel
			return nil
		},
		OnStop: func(context.Context) error {
			if release != nil {
				release()
			}
			return nil
		},
	})
}

func provideOutbound(s *serveSettings) (*outbound, error) { return newOutbound(s.CallbackAllow) }

// provideRegistry is the connector set of serve: stdout rows go to this process's stdout
// and every URL a connector fetches obeys the outbound policy (§1.4).
func provideRegistry(p *process, o *outbound) *connectors.Registry {
	return builtin.Registry(
		builtin.WithStdout(p.env.Stdout),
		// A served config's rows go to the server's own output: mask what the redactor
		// knows (secret params of the runs here, URL passwords).
		builtin.WithStdoutRedactor(p.redactor.Redact),
		builtin.WithHTTPClient(o.client()),
		builtin.WithURLCheck(o.checkURL),
	)
}

func provideLoader(p *process, reg *connectors.Registry) *execute.Loader { return newLoader(p, reg) }

// provideExecutor is the executor of served runs: its connectors reach only what the
// confinement allows (SPEC §14.1).
func provideExecutor(reg *connectors.Registry, log memberLog, c *confine.Confinement, m *metrics.Metrics) *execute.Executor {
	return &execute.Executor{Registry: reg, Log: log.Logger, Reach: c, Metrics: m}
}

func provideWebhook(lc fx.Lifecycle, s *serveSettings) (*webhook.Sender, error) {
	w, err := webhook.New(webhook.Config{Secret: s.CallbackSecret, AllowHosts: s.CallbackAllow})
	if err != nil {
		return nil, err
	}
	lc.Append(fx.Hook{OnStop: func(context.Context) error { w.CloseIdleConnections(); return nil }})
	return w, nil
}

func provideMetrics(s *serveSettings, p *process, st *store.Store) *metrics.Metrics {
	m := metrics.New(metrics.Options{
		MaxPipelines: s.Ops.MaxPipelines,
		Pools:        s.Pools,
		Build:        metrics.Build{Version: p.info.Version, Commit: p.info.Commit, GoVersion: p.info.GoVersion},
	})
	m.SetCluster(s.Cluster, 1)
	m.SetPendingSource(st.PendingByPool)
	return m
}

// provideStateStores holds the connections of `state: {type: postgres}` bookmark stores,
// one pool per database shared by every run naming it. It is built before the member, so
// its stop hook runs after the member's: no run still writes bookmarks when it closes.
func provideStateStores(lc fx.Lifecycle) *statepg.Stores {
	stores := statepg.NewStores()
	lc.Append(fx.Hook{OnStop: func(context.Context) error { stores.Close(); return nil }})
	return stores
}

func provideMember(s *serveSettings, p *process, id identity, log memberLog, st *store.Store,
	w *webhook.Sender, loader *execute.Loader, exec *execute.Executor, m *metrics.Metrics, l *notify.Listener,
	states *statepg.Stores, tr execute.Tracer, watch *runs.Watch,
) (*cluster.Member, error) {
	return cluster.New(cluster.Config{
		InstanceID:    id.InstanceID,
		Listen:        s.Listen,
		Host:          id.Host,
		Version:       id.Version,
		PID:           id.PID,
		Pools:         s.Pools,
		MaxConcurrent: s.MaxConcurrent,
		LeaseTTL:      s.LeaseTTL,
		PollInterval:  s.Poll,
		MaxAttempts:   s.MaxAttempts,
		ShutdownGrace: s.Grace,
		ShutdownKill:  s.Kill,
		AllowFileDirs: s.FileDirs,
		Zone:          s.Zone,
		// A single server holds the history lock (startHistory), so whatever runs it finds
		// running at start was left by a dead predecessor. Clustered members never assume
		// that: a peer's runs are reclaimed only when their leases expire.
		Exclusive:            !s.Cluster,
		StateFormatMax:       state.FormatMax,
		RetainTerminal:       s.RetainTerminal,
		IdempotencyRetention: s.IdemRetention,
		RetainAudit:          s.RetainAudit,
		PoolWaitTimeout:      s.PoolWait,
		VaultFormatMax:       vaultFormatMax(s),
		// Runs are split into shards only by a cluster (SPEC §6.1): a single server runs
		// them whole, with a warning in the run's log.
		Sharding: s.Cluster,
	}, withVault(s, st, cluster.Deps{
		Store: st,
		// Runs that end at about the same time share one finish transaction.
		Finishes:      st,
		Outbox:        st,
		Deliverer:     w,
		Purger:        st,
		Loader:        loader,
		Runner:        exec,
		State:         st,
		OpenState:     confinedStates(states, exec.Reach),
		Callbacks:     runs.CallbackPayload,
		Notifications: notifications(l),
		Changes:       watch,
		PoolTimeouts:  st,
		Due:           st,
		Shards:        st,
		Planner:       exec,
		Metrics:       m,
		Log:           log.Logger,
		Redactor:      p.redactor,
		Audit:         st,
		Withhold:      connectors.WithholdRowData,
		Tracer:        tr,
	}))
}

func provideRuns(s *serveSettings, p *process, log *slog.Logger, st *store.Store, loader *execute.Loader,
	m *cluster.Member, d *drainFlag, mt *metrics.Metrics, exec *execute.Executor, tr execute.Tracer, watch *runs.Watch,
) (*runs.Service, *approvals.Service, *backfillVia, error) {
	ap, bf, bind := newApprovals(s, st, log)
	deps := runs.Deps{
		Store:     st,
		Loader:    loader,
		Waker:     m,
		Canceller: m,
		Log:       log,
		Redactor:  p.redactor,
		Sealer:    runsSealer(s),
		Proposer:  ap,
		Metrics:   mt,
		// Literal paths and hosts are refused at submit (SPEC §14.1).
		Confinement: exec,
		Tracer:      tr, Watch: watch,
	}
	if s.Cluster {
		// Admission reads the live membership: a pool is served while any live,
		// non-draining member serves it (§5.4), and older members are checked (§4.10).
		adm, err := runs.NewClusterAdmission(st, s.LeaseTTL, s.Pools)
		if err != nil {
			return nil, nil, nil, err
		}
		deps.Admission, deps.Capabilities = adm, adm
	}
	svc := runs.New(deps, runs.Config{
		Pools:                s.Pools,
		MaxQueued:            s.MaxQueued,
		QueryTimeout:         s.Timeouts.Query,
		MaxAttempts:          s.MaxAttempts,
		AllowFileDirs:        s.FileDirs,
		CallbackAllowHosts:   s.CallbackAllow,
		Zone:                 s.Zone,
		IdempotencyRetention: s.IdemRetention,
		Draining:             d.Active,
		RequireApproval:      s.RequireApproval,
	})
	bind(svc)
	return svc, ap, bf, nil
}

func provideHealth(s *serveSettings, st *store.Store, m *cluster.Member, d *drainFlag, view membershipView,
	mt *metrics.Metrics,
) *health {
	h := &health{history: st, member: m, drain: d, view: view, maxQueued: s.MaxQueued}
	if s.Cluster {
		h.seen = func(v cluster.View) { mt.SetCluster(true, v.Instances) }
	}
	return h
}

func provideHandler(s *serveSettings, p *process, log *slog.Logger, svc *runs.Service, h *health,
	m *metrics.Metrics, reg *connectors.Registry, view membershipView, tpl *templates.Service,
	mh apihttp.MCPHandler, ap *approvals.Service, sch *scheduling.Service, st *store.Store, tr execute.Tracer, watch *runs.Watch,
) (http.Handler, error) {
	ui, err := newConsole(s, log, svc, tpl, sch, ap, st, tr, m)
	if err != nil {
		return nil, err
	}
	return withConsole(apihttp.New(apihttp.Config{
		BodyLimitBytes: s.BodyLimit,
		ReadTimeout:    s.Timeouts.Read,
		Auth:           s.Auth.config(),
		PollInterval:   s.Poll,
		Version:        p.info.Version,
	}, apihttp.Deps{
		Runs:           svc,
		Templates:      tpl,
		Schedules:      sch,
		Backfills:      sch,
		Health:         h,
		Metrics:        clusterMetrics(s, m, view),
		Connectors:     reg,
		RequestMetrics: m,
		Log:            log,
		MCP:            mh,
		Approvals:      ap,
		Tracer:         tr,
		RunChanges:     watch,
	}), ui), nil
}

// startMember starts claiming (after reclaiming what a crashed predecessor left running)
// and, on stop, ends the loops and records the clean stop; the drain comes before.
func startMember(lc fx.Lifecycle, m *cluster.Member) {
	lc.Append(fx.Hook{
		OnStart: m.Start,
		OnStop:  func(context.Context) error { m.Stop(); return nil },
	})
}

// startHTTP serves the API on the --listen socket (bound before the graph) until stop.
func startHTTP(lc fx.Lifecycle, s *serveSettings, id identity, ln apiListener, h http.Handler, log *slog.Logger, f fatal) {
	base, cut := context.WithCancel(context.Background())
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: s.Timeouts.headerTimeout(),
		// No ReadTimeout: past it net/http cancels the context of a handler still running
		// (a followed log stream, an MCP stream). The handler bounds receiving the body
		// with --read-timeout-secs instead (SPEC §14.3).
		IdleTimeout: s.Timeouts.Idle,
		// No WriteTimeout: followed logs stream for as long as the run lasts.
		ErrorLog:    slog.NewLogLogger(log.Handler(), slog.LevelWarn),
		BaseContext: func(net.Listener) context.Context { return base },
	}
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error {
			go func() {
				if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
					f.report(fmt.Errorf("the HTTP server on %s stopped: %w", s.Listen, err))
				}
			}()
			log.Info("sluice serve listening", "address", "http://"+s.Listen,
				"history", secret.MaskUserinfo(s.History), "data_dir", s.DataDir, "token_file", s.Auth.TokenFile,
				"pools", s.Pools, "max_concurrent_runs", s.MaxConcurrent, "cluster", s.Cluster, "version", id.Version)
			return nil
		},
		OnStop: func(ctx context.Context) error {
			qctx, cancel := context.WithTimeout(ctx, httpQuiet)
			defer cancel()
			if err := srv.Shutdown(qctx); err != nil {
				cut() // ends followed log streams and whatever else still waits
				_ = srv.Close()
			}
			cut()
			return nil
		},
	})
}

// registerDrain is the first step of the shutdown (its hook is registered last): refuse
// submissions, report draining, stop claiming, let runs finish for the grace and hand
// the rest back. Abandoned runs are logged, not an error: their leases will expire.
func registerDrain(lc fx.Lifecycle, m *cluster.Member, d *drainFlag, s *serveSettings, log *slog.Logger) {
	lc.Append(fx.Hook{OnStop: func(ctx context.Context) error {
		d.Set()
		log.Info("shutting down: draining", "in_flight", m.InFlight(), "grace", s.Grace.String(), "kill", s.Kill.String())
		if err := m.Drain(ctx); err != nil {
			log.Warn("drain ended with runs abandoned", "error", err.Error())
		}
		return nil
	}})
}
