package bootstrap

import (
	"context"
	"slices"
	"sync/atomic"
	"time"

	apihttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/application/cluster"
)

// healthTimeout bounds each history probe of /readyz, so a hung database answers 503
// quickly instead of hanging the load balancer's check.
const healthTimeout = 2 * time.Second

// drainFlag is set when shutdown begins: submissions answer 503 draining and /readyz
// reports draining, while GETs and cancels still work.
type drainFlag struct{ v atomic.Bool }

func (d *drainFlag) Set()         { d.v.Store(true) }
func (d *drainFlag) Active() bool { return d.v.Load() }

// historyProbe is what readiness asks of the history.
type historyProbe interface {
	Ping(ctx context.Context) error
	CountQueued(ctx context.Context) (int, error)
}

// memberView is what readiness asks of this process's member.
type memberView interface {
	Draining() bool
	// Healthy is false while the member's own lease renewal or heartbeat fails (§4.9):
	// the history may answer a ping and still not keep this member's leases.
	Healthy() bool
	Row() cluster.MemberRow
}

// health answers /readyz (SPEC §2.6): the history must answer and keep this member's
// leases, the queue must be below --max-queued-runs, and the member must not drain. The
// cluster block comes from view: the live membership with --cluster, this member alone
// without.
type health struct {
	history   historyProbe
	member    memberView
	drain     *drainFlag
	view      membershipView
	maxQueued int // 0 = no limit
	// seen, when set, is told every view read (the instances gauge).
	seen func(cluster.View)
}

var _ apihttp.Health = (*health)(nil)

func (h *health) Ready(ctx context.Context) apihttp.Readiness {
	ctx, cancel := context.WithTimeout(ctx, healthTimeout)
	defer cancel()
	r := apihttp.Readiness{
		Draining:  h.drain.Active() || h.member.Draining(),
		HistoryOK: h.history.Ping(ctx) == nil && h.member.Healthy(),
	}
	if r.HistoryOK {
		n, err := h.history.CountQueued(ctx)
		r.QueueOK = err == nil && (h.maxQueued == 0 || n < h.maxQueued)
	}
	v, err := h.view(ctx)
	if err != nil {
		// The membership cannot be read: the history is unreachable for this member. The
		// block still says who answers.
		r.HistoryOK, r.QueueOK = false, false
		self := cluster.SingleView(h.member.Row())
		self.Enabled = true
		v = self
	} else if h.seen != nil {
		h.seen(v)
	}
	r.Cluster = httpCluster(v)
	return r
}

// httpCluster maps the application's view to the HTTP adapter's block.
func httpCluster(v cluster.View) apihttp.Cluster {
	out := apihttp.Cluster{Enabled: v.Enabled, Instances: v.Instances, Pools: slices.Clone(v.Pools),
		Members: make([]apihttp.Member, 0, len(v.Members))}
	for _, m := range v.Members {
		out.Members = append(out.Members, apihttp.Member{InstanceID: m.InstanceID, Listen: m.Listen,
			Pools: slices.Clone(m.Pools), InFlight: m.InFlight, MaxConcurrent: m.MaxConcurrent})
	}
	return out
}
