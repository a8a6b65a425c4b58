package templates

import (
	"context"

	"github.com/sluicehq/sluice/application/runs"
)

// Audit actions of templates (SPEC §2.10).
const (
	ActionRegistered = "template.registered"
	ActionDeleted    = "template.deleted"
)

// audit records a change made by p. Details never hold the config: it may carry
// credentials.
func (s *Service) audit(ctx context.Context, p runs.Principal, action string, details map[string]any) {
	runs.WriteAudit(ctx, s.deps.Audit, s.deps.Log,
		runs.AuditEntry{At: s.deps.Clock().UTC(), Actor: p.Name, Action: action, Details: details})
}
