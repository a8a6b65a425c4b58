package scheduling

import (
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// invalid is a refused request field (invalid_body, 400, details.field).
func invalid(field, msg string) error { return &runs.InvalidRequestError{Field: field, Message: msg} }

// secretNames are the declared params whose values are never shown.
func secretNames(decl []pipeline.Param) map[string]bool {
	out := map[string]bool{}
	for _, p := range decl {
		if p.Secret {
			out[p.Name] = true
		}
	}
	return out
}
