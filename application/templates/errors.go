package templates

import (
	"errors"

	"github.com/sluicehq/sluice/application/runs"
)

// ErrInUse: the template has schedules or queued or pending runs (template_in_use, 409).
var ErrInUse = errors.New("the template has schedules or queued or pending runs: delete its schedules, and cancel its waiting runs or let them start, before deleting it")

// ErrTenantNotAllowed: the template's tenants list does not include the route's tenant
// (forbidden, 403). It wraps runs.ErrForbidden.
var ErrTenantNotAllowed = errTenant{}

type errTenant struct{}

func (errTenant) Error() string {
	return "forbidden: the template's tenants list does not include this tenant; re-register it with the tenant in tenants"
}

// Unwrap makes errors.Is(err, runs.ErrForbidden) true.
func (errTenant) Unwrap() error { return runs.ErrForbidden }

// Errors lists the package's sentinels for the transports' error tables.
func Errors() []error { return []error{ErrInUse, ErrTenantNotAllowed} }
