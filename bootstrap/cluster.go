package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"go.uber.org/fx"

	"github.com/sluicehq/sluice/adapters/metrics"
	"github.com/sluicehq/sluice/adapters/notify"
	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/lease"
	"github.com/sluicehq/sluice/domain/member"
)

// registerCluster adds the flags of Cluster Mode A (SPEC §4, §5.5); the lease and poll
// flags are shared with single-node serve, which runs the same member loops.
func (f *serveFlags) registerCluster(fs *pflag.FlagSet) {
	fs.BoolVar(&f.cluster, "cluster", false, "share the history with other clustered members (sluice serve --cluster, Cluster Mode A); "+
		"needs --history given as postgres://… or sqlite:PATH and one of --auth-token, --auth-config or --no-auth")
	fs.BoolVar(&f.pollOnly, "poll-only", false, "on PostgreSQL behind a connection pooler: with --cluster no LISTEN/NOTIFY "+
		"wake-ups, only polling every --cluster-poll-secs (poolers drop notifications), and no prepared statements")
	fs.IntVar(&f.poolWaitSecs, "pool-wait-timeout-secs", 0, "with --cluster: fail pending runs with pool_unavailable once "+
		"no live member has served their pool for this long (0 = they wait forever)")
}

// clusterErrors checks the flags that only make sense together (SPEC §4.1, §2.2, §5.5).
// Each message names the flag to change and says why.
func (f *serveFlags) clusterErrors(auth authChoice) []error {
	var errs []error
	if f.poolWaitSecs < 0 {
		errs = append(errs, fmt.Errorf("invalid value for --pool-wait-timeout-secs: %d is negative (0 waits forever)", f.poolWaitSecs))
	}
	if !f.cluster {
		if f.poolWaitSecs > 0 {
			errs = append(errs, errors.New("invalid value for --pool-wait-timeout-secs: it requires --cluster: "+
				"a server without --cluster refuses runs of pools it does not serve when they are submitted, so none wait"))
		}
		return errs
	}
	switch h := strings.TrimSpace(f.history); {
	case h == "":
		errs = append(errs, errors.New("invalid value for --history: --cluster needs --history given explicitly as "+
			"postgres://… or sqlite:PATH, because the default SQLite file in --data-dir is private to one member"))
	case h == "memory":
		errs = append(errs, errors.New("invalid value for --history: --cluster cannot share a memory history, "+
			"because it lives inside one process; use postgres://… or sqlite:PATH"))
	}
	if auth.Generate {
		errs = append(errs, errors.New("--cluster needs one of --auth-token, --auth-config or --no-auth: "+
			"a token generated into one member's --data-dir is unknown to the other members and their clients"))
	}
	return errs
}

// storeOptions are the history options of serve. Only a clustered member on PostgreSQL
// sends NOTIFY wake-ups: a single server wakes its own claim loop and fires its own
// cancel tokens, so notifications would cost a statement per change for no listener.
// --poll-only is the connection-pooler setting, so it also keeps the store from
// preparing statements. A transaction left idle for a renewal interval (TTL/3) is ended
// by PostgreSQL, so a member frozen mid-transaction cannot keep its peers from
// reclaiming the runs it held locked.
func storeOptions(s *serveSettings, log *slog.Logger) store.Options {
	return store.Options{Logger: log, Callbacks: runs.CallbackPayload, PollOnly: s.PollOnly || !s.Cluster,
		SimpleProtocol: s.PollOnly, Slots: s.MaxConcurrent, IdleTxTimeout: lease.RenewInterval(s.LeaseTTL)}
}

// provideListener is the LISTEN connection of a clustered member on PostgreSQL (SPEC
// §4.3, §4.6), or nil when the store sends no notifications (SQLite, --poll-only, no
// --cluster): the member then polls only. It starts before the member (its hook is
// registered first) and stops after it.
func provideListener(lc fx.Lifecycle, s *serveSettings, st *store.Store, log memberLog, watch *runs.Watch) (*notify.Listener, error) {
	if st.WorkChannel() == "" {
		return nil, nil
	}
	l, err := notify.New(notify.Config{URL: s.History, WorkChannel: st.WorkChannel(), CancelChannel: st.CancelChannel(),
		ScheduleChannel: st.ScheduleChannel(), Log: log.Logger,
		// A run ended on another member ends the log streams followed here at once.
		DoneChannel: st.DoneChannel(), Done: watch.Changed})
	if err != nil {
		return nil, err
	}
	lc.Append(fx.Hook{
		OnStart: func(context.Context) error { l.Start(); return nil },
		OnStop:  func(context.Context) error { l.Stop(); return nil },
	})
	return l, nil
}

// notifications turns a possibly nil listener into the member's port: a nil interface,
// never an interface holding a nil pointer, which the member would call.
func notifications(l *notify.Listener) cluster.Notifications {
	if l == nil {
		return nil
	}
	return l
}

// membershipView answers the cluster block of /readyz; the error is an unanswered
// history.
type membershipView func(ctx context.Context) (cluster.View, error)

// provideView reads the live members from the history with --cluster (every member shows
// the same list); a single server shows itself alone.
func provideView(s *serveSettings, st *store.Store, m *cluster.Member) (membershipView, error) {
	if !s.Cluster {
		return func(context.Context) (cluster.View, error) { return cluster.SingleView(m.Row()), nil }, nil
	}
	ms, err := cluster.NewMembership(st, s.LeaseTTL, m)
	if err != nil {
		return nil, err
	}
	return ms.View, nil
}

// clusterMetrics serves /metrics with sluice_serve_cluster_instances read from the
// membership at scrape time, so the gauge is as fresh as the scrape. An unanswered read
// keeps the last value (sluice_serve_history_unreachable says why).
func clusterMetrics(s *serveSettings, m *metrics.Metrics, view membershipView) http.Handler {
	inner := m.Handler()
	if !s.Cluster {
		return inner
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), healthTimeout)
		if v, err := view(ctx); err == nil {
			m.SetCluster(true, v.Instances)
		}
		cancel()
		inner.ServeHTTP(w, r)
	})
}

// lockHistory takes the history lock (§2.1): exclusively for a single server, shared for
// a clustered member. Each refuses the other, so a single server can never take a
// cluster's running runs for the orphans of a dead predecessor.
func lockHistory(ctx context.Context, st *store.Store, s *serveSettings, id identity) (func(), error) {
	if s.Cluster {
		release, err := st.AcquireShared(ctx)
		var locked *store.LockedError
		if errors.As(err, &locked) {
			return nil, fmt.Errorf("--cluster: %w; a server started without --cluster cannot share its history "+
				"(restart it with --cluster)", err)
		}
		return release, err
	}
	release, err := st.AcquireExclusive(ctx, store.Holder{InstanceID: id.InstanceID, Host: id.Host, PID: id.PID})
	var locked *store.LockedError
	if errors.As(err, &locked) && locked.Holder.InstanceID == "" {
		if who := clusterMembers(ctx, st, s.LeaseTTL); who != "" {
			return nil, fmt.Errorf("this history is shared by clustered members (%s): start this server with "+
				"--cluster to join them, or give it its own --history: %w", who, store.ErrLocked)
		}
	}
	return release, err
}

// clusterMembers names the members that heartbeat (within ttl, else any that has not
// stopped), for a refusal; "" when none can be read.
func clusterMembers(ctx context.Context, st *store.Store, ttl time.Duration) string {
	all, now, err := st.Roster(ctx)
	if err != nil || len(all) == 0 {
		return ""
	}
	ms := member.Live(all, now, ttl)
	if len(ms) == 0 {
		ms = all
	}
	names := make([]string, 0, min(len(ms), 3))
	for _, m := range ms[:min(len(ms), 3)] {
		names = append(names, fmt.Sprintf("instance %s on host %s, listen %s", m.InstanceID, m.Host, m.Listen))
	}
	if len(ms) > 3 {
		names = append(names, fmt.Sprintf("%d more", len(ms)-3))
	}
	return strings.Join(names, "; ")
}
