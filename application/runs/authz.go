package runs

import (
	"fmt"

	"github.com/sluicehq/sluice/domain/run"
)

// The permission rules of SPEC §2.2 that belong to the use-cases (the HTTP layer checks
// routes too; MCP and the CLI reach the use-cases without routes, so the rules live here
// as well). A tenant principal may submit for its own tenant and read its own tenant's
// runs and logs — nothing else, and another tenant's run is not found rather than
// forbidden, so ids of other tenants cannot be probed.

func rank(r Role) int {
	switch r {
	case Viewer:
		return 1
	case Operator:
		return 2
	case Admin:
		return 3
	}
	return 0 // an unknown role may do nothing
}

// need refuses a principal below role, and any tenant principal: the calls that use it
// (cancel, rollback, delete, config, audit) are not tenant routes.
func need(p Principal, role Role, what string) error {
	if p.Tenant != "" {
		return fmt.Errorf("%w: tenant principal %q may not %s", ErrForbidden, p.Name, what)
	}
	if rank(p.Role) < rank(role) {
		return fmt.Errorf("%w: %s needs the %s role; principal %q is %q", ErrForbidden, what, role, p.Name, p.Role)
	}
	return nil
}

// Require is need for the other use-case packages (schedules, backfills): the same rule
// and the same refusal, worded with what.
func Require(p Principal, role Role, what string) error { return need(p, role, what) }

// canRead refuses a principal without any role.
func canRead(p Principal) error {
	if rank(p.Role) < rank(Viewer) {
		return fmt.Errorf("%w: principal %q has no role", ErrForbidden, p.Name)
	}
	return nil
}

// canSubmit: a tenant principal only for its own tenant and only as operator or admin
// (SPEC §2.2, §14.1: a tenant viewer reads); others need operator.
func canSubmit(p Principal, tenant string) error {
	if p.Tenant != "" {
		if rank(p.Role) < rank(Operator) {
			return fmt.Errorf("%w: running a template of tenant %q needs the operator role; principal %q is %q",
				ErrForbidden, p.Tenant, p.Name, p.Role)
		}
		if tenant != p.Tenant {
			return fmt.Errorf("%w: tenant principal %q may only submit runs of tenant %q", ErrForbidden, p.Name, p.Tenant)
		}
		return nil
	}
	return need(p, Operator, "submit runs")
}

// canCancel: a tenant operator or admin may cancel its own tenant's runs (SPEC §2.2; the
// lookup that follows hides the others); untenanted principals need operator.
func canCancel(p Principal) error {
	if p.Tenant != "" {
		if rank(p.Role) < rank(Operator) {
			return fmt.Errorf("%w: cancelling runs of tenant %q needs the operator role; principal %q is %q",
				ErrForbidden, p.Tenant, p.Name, p.Role)
		}
		return nil
	}
	return need(p, Operator, "cancel runs")
}

// visible hides another tenant's run from a tenant principal.
func visible(p Principal, rec *Record) error {
	if p.Tenant != "" && rec.Tenant != p.Tenant {
		return fmt.Errorf("run %s: %w", rec.ID, run.ErrNotFound)
	}
	return nil
}
