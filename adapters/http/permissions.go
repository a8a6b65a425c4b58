package http

import (
	"net/http"
	"strings"

	"github.com/sluicehq/sluice/application/runs"
)

// Permission is one row of the permission table (SPEC §2.2): the weakest role that may call
// Method Route, and whether tenant principals may call it too. Route is the router's
// pattern (":id" style).
type Permission struct {
	Method string
	Route  string
	Role   runs.Role
	// Tenant lets tenant principals call the route; what they see is narrowed to their own
	// tenant (the list filter is forced, single runs of other tenants answer not_found).
	Tenant bool
}

// tenantPrefix starts the routes that belong to one tenant; a tenant principal may call
// them for its own tenant only, with the role the table asks for.
const tenantPrefix = "/v1/tenants/:tenant"

// Permissions returns the permission table. A route missing from it is admin-only, so a
// new route is closed until someone decides otherwise.
func Permissions() []Permission {
	return []Permission{
		{http.MethodGet, "/v1/runs", runs.Viewer, true},
		{http.MethodGet, "/v1/runs/:id", runs.Viewer, true},
		{http.MethodGet, "/v1/runs/:id/shards", runs.Viewer, true},
		{http.MethodGet, "/v1/runs/:id/logs", runs.Viewer, true},
		{http.MethodGet, "/v1/connectors", runs.Viewer, false},
		{http.MethodGet, "/v1/openapi.json", runs.Viewer, false},
		// Configs may hold more than their redaction catches (free-form SQL), so viewers and
		// tenant principals never read them.
		{http.MethodGet, "/v1/runs/:id/config", runs.Operator, false},
		{http.MethodPost, "/v1/runs", runs.Operator, false},
		// A tenant operator or admin cancels its own tenant's runs (others are not found).
		{http.MethodPost, "/v1/runs/:id/cancel", runs.Operator, true},
		{http.MethodPost, "/v1/runs/:id/rollback", runs.Operator, false},
		{http.MethodDelete, "/v1/runs/:id", runs.Admin, false},
		{http.MethodGet, "/v1/audit", runs.Admin, false},
		// Tenant principals see the templates that list their tenant, never the config.
		{http.MethodGet, "/v1/templates", runs.Viewer, true},
		{http.MethodGet, "/v1/templates/:id", runs.Viewer, true},
		{http.MethodPost, "/v1/templates", runs.Admin, false},
		{http.MethodDelete, "/v1/templates/:id", runs.Admin, false},
		{http.MethodPost, "/v1/templates/:id/runs", runs.Operator, false},
		{http.MethodPost, "/v1/templates/:id/fanout", runs.Operator, false},
		{http.MethodGet, "/v1/schedules", runs.Viewer, false},
		{http.MethodGet, "/v1/schedules/preview", runs.Viewer, false},
		{http.MethodGet, "/v1/schedules/:id", runs.Viewer, false},
		{http.MethodGet, "/v1/schedules/:id/ticks", runs.Viewer, false},
		{http.MethodPost, "/v1/schedules/:id/pause", runs.Operator, false},
		{http.MethodPost, "/v1/schedules/:id/resume", runs.Operator, false},
		{http.MethodPost, "/v1/templates/:id/schedules", runs.Admin, false},
		{http.MethodPost, "/v1/backfill", runs.Operator, false},
		{http.MethodDelete, "/v1/schedules/:id", runs.Admin, false},
		// Running is for operators and admins, tenant principals included: a tenant viewer
		// reads (SPEC §2.2, §14.1).
		{http.MethodPost, "/v1/tenants/:tenant/templates/:id/runs", runs.Operator, true},
		{http.MethodGet, "/v1/change-requests", runs.Viewer, false},
		{http.MethodGet, "/v1/change-requests/:id", runs.Viewer, false},
		{http.MethodPost, "/v1/change-requests/:id/approve", runs.Operator, false},
		{http.MethodPost, "/v1/change-requests/:id/reject", runs.Operator, false},
		// MCP needs viewer to connect; each tool then asks the role it needs (SPEC §11).
		// Tenant principals have only their tenant routes, so they never reach MCP.
		{http.MethodPost, "/mcp", runs.Viewer, false},
		{http.MethodGet, "/mcp", runs.Viewer, false},
		{http.MethodDelete, "/mcp", runs.Viewer, false},
	}
}

type permissions map[string]Permission

func permissionTable() permissions {
	out := permissions{}
	for _, p := range Permissions() {
		out[p.Method+" "+p.Route] = p
	}
	return out
}

// check decides whether p may call method route; tenant is the route's :tenant value.
func (ps permissions) check(p runs.Principal, method, route, tenant string) error {
	rule, ok := ps[method+" "+route]
	if !ok {
		rule = Permission{Method: method, Route: route, Role: runs.Admin}
	}
	onTenantRoute := route == tenantPrefix || strings.HasPrefix(route, tenantPrefix+"/")
	if p.Tenant != "" && rank(p.Role) > 0 {
		switch {
		case onTenantRoute && tenant != p.Tenant:
			return apiErrorf(http.StatusForbidden, codeForbidden,
				"principal %q belongs to tenant %q and may not use tenant %q's routes", p.Name, p.Tenant, tenant)
		case !onTenantRoute && !rule.Tenant:
			return apiErrorf(http.StatusForbidden, codeForbidden,
				"principal %q belongs to tenant %q and may not call %s %s; use the /v1/tenants/%s/ routes",
				p.Name, p.Tenant, method, route, p.Tenant)
		}
	}
	if rank(p.Role) < rank(rule.Role) {
		return apiErrorf(http.StatusForbidden, codeForbidden,
			"principal %q has role %s; %s %s needs %s", p.Name, roleName(p.Role), method, route, rule.Role)
	}
	return nil
}

func roleName(r runs.Role) string {
	if rank(r) == 0 {
		return "(none)"
	}
	return string(r)
}
