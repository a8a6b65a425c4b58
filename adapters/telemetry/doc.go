// Package telemetry is the OpenTelemetry side of tracing (SPEC §14.6): it implements the
// application's tracing port (execute.Tracer) with the OpenTelemetry SDK and exports
// spans over OTLP/HTTP to --otlp-endpoint. Nothing else in the module imports the SDK;
// the application sees the port, and bootstrap wires this package only when an endpoint
// is configured (otherwise execute.NopTracer runs and tracing costs nothing).
package telemetry
