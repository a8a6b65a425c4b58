package runs

import (
	"context"
	"log/slog"
	"strings"
)

// Audit actions written by the run use-cases (SPEC §2.10).
const (
	ActionSubmitted = "run.submitted"
	ActionCancel    = "run.cancel"
	ActionDeleted   = "run.deleted"
	ActionPurged    = "runs.purged"
)

// Auditor appends audit entries (SPEC §2.10); the history store implements it. The other
// use-case packages record their changes through it with WriteAudit.
type Auditor interface {
	Audit(ctx context.Context, e AuditEntry) error
}

// WriteAudit appends e through a (nil records nothing). A failed write does not undo the
// change it records, which is committed (a retry would repeat it); it is logged instead.
// Callers never put configs or params in the details: they may carry secrets.
func WriteAudit(ctx context.Context, a Auditor, log *slog.Logger, e AuditEntry) {
	if a == nil {
		return
	}
	if err := a.Audit(ctx, e); err != nil {
		log.ErrorContext(ctx, "audit entry not written", "action", e.Action, "run_id", e.RunID, "error", err.Error())
	}
}

// audit appends an entry with its details redacted. A failed audit write does not undo
// or fail the call it records — the change is already committed and a client retry
// would repeat it — so it is logged as an error instead. A new run's entry is not
// written here: it commits with the run (Record.Audit).
func (s *Service) audit(ctx context.Context, actor Principal, action, runID string, details map[string]any) {
	s.writeAudit(ctx, s.auditEntry(actor, action, runID, details))
}

// auditEntry builds an entry with its details redacted.
func (s *Service) auditEntry(actor Principal, action, runID string, details map[string]any) AuditEntry {
	e := AuditEntry{
		At:      s.now(),
		Actor:   actor.Name,
		Action:  action,
		RunID:   runID,
		Details: s.redactValue(details).(map[string]any),
	}
	if e.Actor == "" {
		e.Actor = System.Name
	}
	return e
}

// writeAudit appends e on its own, logging a failure (see audit).
func (s *Service) writeAudit(ctx context.Context, e AuditEntry) {
	if err := s.deps.Store.Audit(ctx, e); err != nil {
		s.deps.Log.ErrorContext(ctx, "audit entry not written", "action", e.Action, "run_id", e.RunID, "error", s.deps.Redactor.Redact(err.Error()))
	}
}

// redactValue masks registered secrets and URL credentials in every string of v.
func (s *Service) redactValue(v any) any {
	switch x := v.(type) {
	case string:
		return s.redactString(x)
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = s.redactValue(val)
		}
		return out
	case map[string]string:
		out := make(map[string]any, len(x))
		for k, val := range x {
			out[k] = s.redactString(val)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = s.redactValue(val)
		}
		return out
	case []string:
		out := make([]any, len(x))
		for i, val := range x {
			out[i] = s.redactString(val)
		}
		return out
	default:
		return v
	}
}

func (s *Service) redactString(v string) string {
	return s.deps.Redactor.Redact(redactUserinfo(v))
}

// redacted replaces what is hidden.
const redacted = "***"

// redactUserinfo hides the credentials of every URL in s: scheme://user:pass@host
// becomes scheme://***@host. It works on text rather than through net/url because a
// stored config may hold directives (${env:PG_USER}) that net/url refuses in userinfo.
func redactUserinfo(s string) string {
	if !strings.Contains(s, "://") {
		return s
	}
	var b strings.Builder
	rest := s
	for {
		i := strings.Index(rest, "://")
		if i < 0 {
			b.WriteString(rest)
			return b.String()
		}
		b.WriteString(rest[:i+3])
		rest = rest[i+3:]
		// Passwords are often written unescaped ('/', '?' and '#' included), so the last
		// '@' before whitespace or a quote ends the credentials: a path holding an '@'
		// is over-redacted rather than a password leaked.
		end := strings.IndexAny(rest, " \t\r\n\"'")
		if end < 0 {
			end = len(rest)
		}
		if at := strings.LastIndexByte(rest[:end], '@'); at >= 0 {
			b.WriteString(redacted)
			rest = rest[at:]
		}
	}
}
