package bootstrap

import (
	"fmt"
	"net/url"

	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/adapters/cli"
	"github.com/sluicehq/sluice/adapters/metrics"
	"github.com/sluicehq/sluice/domain/secret"
)

// opsFlags are serve's operability flags (SPEC §14.6).
type opsFlags struct {
	maxPipelines int
	logFormat    string
	otlpEndpoint string
}

// opsSettings are the validated operability settings.
type opsSettings struct {
	// MaxPipelines is --metrics-max-pipelines: distinct pipeline labels before the rest
	// are exported as pipeline="_other".
	MaxPipelines int
	// LogFormat is --log-format: json, text, or "" (text on a terminal, else json).
	LogFormat string
	// OTLPEndpoint is --otlp-endpoint (or OTEL_EXPORTER_OTLP_ENDPOINT): the OTLP/HTTP
	// receiver spans are exported to; "" turns tracing off.
	OTLPEndpoint string
}

func (f *opsFlags) register(fs *pflag.FlagSet) {
	fs.IntVar(&f.maxPipelines, "metrics-max-pipelines", metrics.DefaultMaxPipelines,
		"distinct pipeline labels /metrics exports; later pipelines share pipeline=\""+metrics.OtherPipeline+"\"")
	fs.StringVar(&f.logFormat, "log-format", cli.LogFormatAuto, cli.LogFormatUsage)
	fs.StringVar(&f.otlpEndpoint, "otlp-endpoint", "",
		"OpenTelemetry: export traces over OTLP/HTTP to this receiver, e.g. http://collector:4318 (/v1/traces is added "+
			"when the URL has no path); also read from "+otelEndpointEnv+"; default: tracing off")
	_ = fs.SetAnnotation("otlp-endpoint", cli.AnnotationEnvAlias, []string{otelEndpointEnv})
}

// otelEndpointEnv is OpenTelemetry's standard variable for the OTLP receiver, read after
// SLUICE_OTLP_ENDPOINT.
const otelEndpointEnv = "OTEL_EXPORTER_OTLP_ENDPOINT"

// settings validates the flags; each error names its flag.
func (f *opsFlags) settings() (opsSettings, []error) {
	var errs []error
	if f.maxPipelines < 0 {
		errs = append(errs, fmt.Errorf("invalid value for --metrics-max-pipelines: %d is negative (0 exports every pipeline as %q)",
			f.maxPipelines, metrics.OtherPipeline))
	}
	switch f.logFormat {
	case cli.LogFormatAuto, cli.LogFormatJSON, cli.LogFormatText:
	default:
		errs = append(errs, fmt.Errorf("invalid value for --log-format: %q (want json or text)", f.logFormat))
	}
	if f.otlpEndpoint != "" {
		if u, err := url.Parse(f.otlpEndpoint); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			errs = append(errs, fmt.Errorf("invalid value for --otlp-endpoint (or %s): %q (want an http:// or https:// URL such as http://collector:4318)",
				otelEndpointEnv, secret.MaskUserinfo(f.otlpEndpoint)))
		}
	}
	return opsSettings{MaxPipelines: f.maxPipelines, LogFormat: f.logFormat, OTLPEndpoint: f.otlpEndpoint}, errs
}
