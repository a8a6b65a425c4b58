package bootstrap

import (
	"fmt"

	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/adapters/cli"
	"github.com/sluicehq/sluice/adapters/metrics"
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
	fs.StringVar(&f.otlpEndpoint, "otlp-endpoint", "", cli.OTLPEndpointUsage)
	_ = fs.SetAnnotation("otlp-endpoint", cli.AnnotationEnvAlias, []string{cli.OTelEndpointEnv})
}

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
	if err := cli.CheckOTLPEndpoint(f.otlpEndpoint); err != nil {
		errs = append(errs, err)
	}
	return opsSettings{MaxPipelines: f.maxPipelines, LogFormat: f.logFormat, OTLPEndpoint: f.otlpEndpoint}, errs
}
