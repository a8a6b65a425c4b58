package bootstrap

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/url"

	"go.uber.org/fx"

	"github.com/sluicehq/sluice/adapters/cli"
	apihttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/domain/secret"
)

// ValidateServeGraph checks the serve graph with every constructor's inputs present,
// without calling any of them (fx.ValidateApp).
func ValidateServeGraph() error {
	s := &serveSettings{History: "memory", Pools: []string{"default"}, MaxConcurrent: 1}
	p := &process{env: cli.Env{Stdout: io.Discard, Stderr: io.Discard}, redactor: secret.NewRedactor()}
	log := slog.New(slog.DiscardHandler)
	return fx.ValidateApp(serveGraph(s, p, log, memberLog{log}, identity{InstanceID: "x"}, apiListener{}, make(fatal, 1)), fx.NopLogger)
}

// EnsureToken exposes the token file logic.
func EnsureToken(dataDir string) (path, token string, created bool, err error) {
	return ensureToken(dataDir)
}

// HistorySecrets exposes the credentials found in a history URL.
func HistorySecrets(raw string) []string { return historySecrets(raw) }

// Probe is a fake history for Health.
type Probe struct {
	PingErr  error
	Queued   int
	QueueErr error
}

func (p Probe) Ping(context.Context) error               { return p.PingErr }
func (p Probe) CountQueued(context.Context) (int, error) { return p.Queued, p.QueueErr }

// View is a fake member for Health.
type View struct {
	Self      cluster.MemberRow
	Drain     bool
	Unhealthy bool
}

func (v View) Draining() bool         { return v.Drain }
func (v View) Healthy() bool          { return !v.Unhealthy }
func (v View) Row() cluster.MemberRow { return v.Self }

// NewHealth builds the /readyz health of a single server (its member alone in the
// cluster block).
func NewHealth(h Probe, m View, draining bool, maxQueued int) apihttp.Health {
	return NewClusterHealth(h, m, draining, maxQueued, func(context.Context) (cluster.View, error) {
		return cluster.SingleView(m.Row()), nil
	}, nil)
}

// NewClusterHealth builds the /readyz health with a membership view; seen is told each
// view read.
func NewClusterHealth(h Probe, m View, draining bool, maxQueued int,
	view func(context.Context) (cluster.View, error), seen func(cluster.View),
) apihttp.Health {
	d := &drainFlag{}
	if draining {
		d.Set()
	}
	return &health{history: h, member: m, drain: d, view: view, maxQueued: maxQueued, seen: seen}
}

// OutboundCheck and OutboundDial expose the connectors' outbound policy.
func OutboundCheck(allow []string, raw string) error {
	o, err := newOutbound(allow)
	if err != nil {
		return err
	}
	u, err := url.Parse(raw)
	if err != nil {
		return err
	}
	return o.checkURL(context.Background(), u)
}

func OutboundDial(allow []string, addr string) (net.Conn, error) {
	o, err := newOutbound(allow)
	if err != nil {
		return nil, err
	}
	return o.dial(context.Background(), "tcp", addr)
}
