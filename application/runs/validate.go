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
	return s.ValidateRequest(ctx, SubmitRequest{Principal: p, Config: config, Params: params, Pool: poolName})
}

// ValidateRequest is Validate for a whole request: its backfill window, logical instant
// and zone are bound as Submit would bind them (a backfill is checked this way before
// it is proposed).
func (s *Service) ValidateRequest(ctx context.Context, req SubmitRequest) ([]string, error) {
	if err := canRead(req.Principal); err != nil {
		return nil, err
	}
	if len(req.Config) == 0 {
		return nil, invalid("config", "config is required: pass the pipeline as YAML or JSON text")
	}
	logical, zone := s.now(), s.cfg.Zone
	if req.Clock != nil {
		logical = req.Clock.UTC()
	}
	if req.Zone != nil {
		zone = req.Zone
	}
	cfg, _, err := s.load(ctx, req, logical, zone)
	if err != nil {
		return nil, err
	}
	warnings := []string{}
	for _, w := range pipeline.RunWarnings(cfg, nil) {
		warnings = append(warnings, s.redactString(w))
	}
	return warnings, nil
}
