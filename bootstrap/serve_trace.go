package bootstrap

import (
	"context"
	"log/slog"

	"go.uber.org/fx"

	"github.com/sluicehq/sluice/adapters/telemetry"
	"github.com/sluicehq/sluice/application/execute"
)

// provideTracer is the tracing port of the server (SPEC §14.6): OpenTelemetry exporting
// to --otlp-endpoint when one is set, else the no-op tracer. Its stop hook runs after the
// member's and the HTTP server's (it is built before them), so the spans of the last runs
// and requests are flushed, within the stop's deadline.
func provideTracer(lc fx.Lifecycle, s *serveSettings, id identity, log *slog.Logger) (execute.Tracer, error) {
	if s.Ops.OTLPEndpoint == "" {
		return execute.NopTracer{}, nil
	}
	t, err := telemetry.New(context.Background(), telemetry.Options{
		Endpoint:   s.Ops.OTLPEndpoint,
		Version:    id.Version,
		InstanceID: id.InstanceID,
		Log:        log.With("component", "telemetry"),
	})
	if err != nil {
		return nil, err
	}
	lc.Append(fx.Hook{OnStop: func(ctx context.Context) error {
		if err := t.Shutdown(ctx); err != nil {
			log.Warn("flushing traces at shutdown failed; the last spans are lost", "error", err.Error())
		}
		return nil
	}})
	return t, nil
}
