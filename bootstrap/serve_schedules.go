package bootstrap

import (
	"context"
	"log/slog"

	"go.uber.org/fx"

	"github.com/sluicehq/sluice/adapters/metrics"
	"github.com/sluicehq/sluice/adapters/notify"
	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/approvals"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/application/templates"
)

// provideSchedules builds the schedule and backfill use-cases over the template entry
// point and the run service, so their runs take the one submit funnel.
func provideSchedules(s *serveSettings, log *slog.Logger, st *store.Store, tpl *templates.Service, svc *runs.Service,
	m *metrics.Metrics, ap *approvals.Service, bf *backfillVia,
) *scheduling.Service {
	sch := scheduling.New(scheduling.Deps{
		Store:     st,
		Templates: tpl,
		Runs:      svc,
		Ticks:     svc,
		Sealer:    runsSealer(s),
		Log:       log,
		Metrics:   m,
		Audit:     st,
		Proposer:  ap,
		Checker:   svc,
	}, scheduling.Config{Zone: s.Zone, RequireApproval: s.RequireApproval, PassWorkers: passWorkers(st)})
	bf.svc = sch
	return sch
}

// startScheduler campaigns for the scheduler's leadership once the API serves (SPEC
// §9.3): a single server always leads; clustered members elect one. Its hook is
// registered after the drain's, so it stops first: a draining leader resigns before its
// runs drain, and a standby takes over at once. A clustered member on PostgreSQL (ln
// not nil) also wakes on the schedules other members create or resume.
func startScheduler(lc fx.Lifecycle, s *serveSettings, id identity, st *store.Store, svc *scheduling.Service, ln *notify.Listener) {
	var wake <-chan struct{}
	if ln != nil {
		wake = ln.ScheduleWakeups()
	}
	l := scheduling.NewLeader(svc, st.Elector(s.Cluster), scheduling.LeaderConfig{
		Candidate: scheduling.Candidate{InstanceID: id.InstanceID, Host: id.Host, PID: id.PID, Version: id.Version, TTL: s.LeaderTTL},
		Wake:      wake,
	})
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error { l.Start(); return nil },
		OnStop:  func(context.Context) error { l.Stop(); return nil },
	})
}

// passWorkers is how many batches of ticks a pass has in flight at once: several on
// PostgreSQL, where each batch's transaction waits mostly on its commit; one on SQLite's
// one writer.
func passWorkers(st *store.Store) int {
	if st.Dialect() == store.DialectPostgres {
		return 8
	}
	return 1
}
