package bootstrap

import (
	"context"
	"errors"
	"log/slog"
	"slices"

	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/adapters/connectors"
	apihttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/adapters/mcp"
	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/approvals"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/templates"
)

// mcpFlags are --mcp and --mcp-allow-mutations (SPEC §11).
type mcpFlags struct {
	enabled, allowMutations bool
}

func (f *mcpFlags) register(fs *pflag.FlagSet) {
	fs.BoolVar(&f.enabled, "mcp", false, "serve MCP (streamable HTTP) at /mcp behind the same bearer auth, for AI agents")
	fs.BoolVar(&f.allowMutations, "mcp-allow-mutations", false, "offer the MCP tools that start or cancel runs to operator and admin principals (needs --mcp)")
}

// mcpSettings are the validated MCP flags.
type mcpSettings struct {
	Enabled        bool
	AllowMutations bool
}

func (f *mcpFlags) settings() (mcpSettings, error) {
	if f.allowMutations && !f.enabled {
		return mcpSettings{}, errors.New("invalid value for --mcp-allow-mutations: it needs --mcp")
	}
	return mcpSettings{Enabled: f.enabled, AllowMutations: f.allowMutations}, nil
}

// provideMCP builds the MCP server when --mcp is set; nil leaves /mcp unrouted. Its
// errors go through the REST error table and its text through the REST redaction, so
// an agent reads what a person would.
func provideMCP(s *serveSettings, p *process, log *slog.Logger, svc *runs.Service, tpl *templates.Service,
	ap *approvals.Service, reg *connectors.Registry, h *health, st *store.Store,
) apihttp.MCPHandler {
	if !s.MCP.Enabled {
		return nil
	}
	return mcp.New(mcp.Config{AllowMutations: s.MCP.AllowMutations, Version: p.info.Version}, mcp.Deps{
		Runs:       svc,
		Templates:  tpl,
		Approvals:  ap,
		Connectors: reg,
		Cluster:    clusterStatus{health: h, pending: st.PendingByPool},
		Errors:     apihttp.Classify,
		Redact:     func(v string) string { return apihttp.Redact(p.redactor.Redact(v)) },
		Log:        log,
	})
}

// clusterStatus answers the MCP cluster_status tool from the same view as /readyz plus
// the history's pending runs per pool.
type clusterStatus struct {
	health  apihttp.Health
	pending func(context.Context) (map[string]int, error)
}

func (c clusterStatus) Status(ctx context.Context) (mcp.ClusterStatus, error) {
	r := c.health.Ready(ctx)
	out := mcp.ClusterStatus{Enabled: r.Cluster.Enabled, Instances: r.Cluster.Instances, HistoryOK: r.HistoryOK,
		Draining: r.Draining, Pools: slices.Clone(r.Cluster.Pools), Members: make([]mcp.Member, 0, len(r.Cluster.Members))}
	for _, m := range r.Cluster.Members {
		pools := slices.Clone(m.Pools)
		if pools == nil {
			pools = []string{}
		}
		out.Members = append(out.Members, mcp.Member{InstanceID: m.InstanceID, Listen: m.Listen, Pools: pools,
			InFlight: m.InFlight, MaxConcurrent: m.MaxConcurrent})
	}
	pending, err := c.pending(ctx)
	if err != nil {
		return mcp.ClusterStatus{}, err
	}
	out.PendingByPool = pending
	return out, nil
}
