package bootstrap

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/adapters/cli"
	"github.com/sluicehq/sluice/adapters/connectors/builtin"
	"github.com/sluicehq/sluice/adapters/statefile"
	"github.com/sluicehq/sluice/adapters/statepg"
	"github.com/sluicehq/sluice/adapters/telemetry"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// StateFileName is the local state file inside --data-dir.
const StateFileName = "state.json"

// addLocal wires `sluice run` and `sluice validate`: the config loader with this process's
// environment, the builtin connectors, and the local state file.
func addLocal(root *cobra.Command, p *process) {
	registry := builtin.Registry(builtin.WithStdout(p.env.Stdout))
	local := cli.Local{
		Loader:     newLoader(p, registry),
		Catalog:    registry,
		Executor:   &execute.Executor{Registry: registry},
		OpenState:  openLocalState,
		Redactor:   p.redactor,
		IsTerminal: cli.IsTerminal,
		Tracing:    p.localTracing,
	}
	root.AddCommand(cli.NewRunCommand(local), cli.NewValidateCommand(local))
}

// localTracing is the OpenTelemetry tracer of one `sluice run` (SPEC §14.6), named like a
// server member (service.version, a fresh service.instance.id). Its flush is the
// provider's shutdown: the run's spans are exported before the process exits.
func (p *process) localTracing(ctx context.Context, endpoint string, log *slog.Logger) (execute.Tracer, func(context.Context) error, error) {
	id, err := newIdentity(p.info.Version)
	if err != nil {
		return nil, nil, err
	}
	t, err := telemetry.New(ctx, telemetry.Options{Endpoint: endpoint, Version: id.Version, InstanceID: id.InstanceID,
		Log: log.With("component", "telemetry")})
	if err != nil {
		return nil, nil, err
	}
	return t, t.Shutdown, nil
}

// openLocalState opens the state store `sluice run` uses: the local file in the data
// directory (also what an unset state type means there), or a PostgreSQL database. The
// process ends with the run, so the database's connections are not closed early.
func openLocalState(ctx context.Context, st pipeline.State, dataDir string) (execute.StateStore, error) {
	switch st.Type {
	case pipeline.StateDefault, pipeline.StateLocal:
		return statefile.Open(filepath.Join(dataDir, StateFileName))
	case pipeline.StatePostgres:
		return statepg.NewStores().Open(ctx, st)
	}
	return nil, pipeline.Errors{{
		Path:    "pipeline.state.type",
		Message: fmt.Sprintf("state type %q is not available to `sluice run`; use local (the default) or postgres, or run it with `sluice serve`", st.Type),
	}}
}
