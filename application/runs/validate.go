package runs

import (
	"context"

	"github.com/sluicehq/sluice/domain/pipeline"
)

// Validate checks a config the way Submit would before storing it — the same loader,
// directive restrictions, pool choice and admission — and stores nothing. It returns the
// config's warnings when it would be accepted, or the error Submit would return (config
// errors with their paths), so a caller that asks first hears the same answer as one
// that submits. Any principal with a role may ask: nothing is created.
func (s *Service) Validate(ctx context.Context, p Principal, config []byte, params map[string]string, poolName string) ([]string, error) {
	if err := canRead(p); err != nil {
		return nil, err
	}
	if len(config) == 0 {
		return nil, invalid("config", "config is required: pass the pipeline as YAML or JSON text")
	}
	cfg, _, err := s.load(ctx, SubmitRequest{Principal: p, Config: config, Params: params, Pool: poolName}, s.now(), s.cfg.Zone)
	if err != nil {
		return nil, err
	}
	warnings := []string{}
	for _, w := range pipeline.RunWarnings(cfg, nil) {
		warnings = append(warnings, s.redactString(w))
	}
	return warnings, nil
}
