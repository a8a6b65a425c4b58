package cli

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/secret"
)

// OTelEndpointEnv is OpenTelemetry's standard variable for the OTLP receiver; serve's and
// run's --otlp-endpoint read it after their SLUICE_* variable.
const OTelEndpointEnv = "OTEL_EXPORTER_OTLP_ENDPOINT"

// OTLPEndpointUsage is the help text of --otlp-endpoint.
const OTLPEndpointUsage = "OpenTelemetry: export traces over OTLP/HTTP to this receiver, e.g. http://collector:4318 " +
	"(/v1/traces is added when the URL has no path); also read from " + OTelEndpointEnv + "; default: tracing off"

// CheckOTLPEndpoint refuses an --otlp-endpoint that is not an http(s) URL, naming the
// flag and the variable (the value is shown without its credentials).
func CheckOTLPEndpoint(v string) error {
	if v == "" {
		return nil
	}
	if u, err := url.Parse(v); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return fmt.Errorf("invalid value for --otlp-endpoint (or %s): %q (want an http:// or https:// URL such as http://collector:4318)",
			OTelEndpointEnv, secret.MaskUserinfo(v))
	}
	return nil
}

// TracingStarter starts the tracer of one local run exporting to endpoint, logging export
// failures to log; flush exports what it still holds and stops it (ctx bounds the wait).
type TracingStarter func(ctx context.Context, endpoint string, log *slog.Logger) (t execute.Tracer, flush func(context.Context) error, err error)

// traceFlushTimeout bounds the export of a local run's spans before the process exits:
// an unreachable receiver costs the run this long at most, never a hang.
const traceFlushTimeout = 10 * time.Second

// localTrace is the trace of one `sluice run`: a "run.attempt" span lasting the
// execution with each confirmed page as an event (the executor adds them), and a "finish"
// span for the outcome, as serve records a claimed run (SPEC §14.6).
type localTrace struct {
	tracer execute.Tracer
	flush  func(context.Context) error
	ctx    context.Context // carries the attempt span
	span   execute.Span
}

// startTrace opens the attempt span of cfg's run; with no endpoint it records nothing.
func (l Local) startTrace(ctx context.Context, endpoint string, cfg *pipeline.Config, log *slog.Logger) (*localTrace, error) {
	lt := &localTrace{tracer: execute.NopTracer{}, flush: func(context.Context) error { return nil }}
	if endpoint != "" {
		if l.Tracing == nil {
			return nil, Usage(fmt.Errorf("--otlp-endpoint: tracing is not available in this build"))
		}
		t, flush, err := l.Tracing(ctx, endpoint, log)
		if err != nil {
			return nil, Usage(err)
		}
		lt.tracer, lt.flush = t, flush
	}
	lt.ctx, lt.span = lt.tracer.Start(ctx, "run.attempt", execute.A("pipeline", cfg.Name), execute.A("attempt", 1),
		execute.A("source", cfg.Source.Type), execute.A("sink", cfg.Sink.Type), execute.A("mode", "local"))
	return lt, nil
}

// end records the outcome (a "finish" span under the attempt, then the attempt's own
// attributes) and exports every span before the process goes on to exit. A failed export
// is a warning: the run's outcome stands.
func (l Local) endTrace(lt *localTrace, s execute.Stats, err error, log *slog.Logger) {
	status, ej := l.outcome(err)
	attrs := []execute.Attr{execute.A("status", status)}
	if ej != nil && status == statusFailed {
		attrs = append(attrs, execute.A("error_code", ej.Code))
	}
	_, finish := lt.tracer.Start(lt.ctx, "finish", attrs...)
	if status == statusFailed {
		finish.Fail(ej.Message)
		lt.span.Fail(ej.Message)
	}
	finish.End()
	lt.span.SetAttrs(append(attrs, execute.A("rows_written", s.RowsWritten), execute.A("pages", s.Pages))...)
	lt.span.End()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(lt.ctx), traceFlushTimeout)
	defer cancel()
	if ferr := lt.flush(ctx); ferr != nil {
		log.Warn("traces were not all exported", "error", l.redact(ferr.Error()))
	}
}
