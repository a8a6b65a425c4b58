package http

import "github.com/sluicehq/sluice/application/runs"

// PermissionChecker exposes the permission decision for routes the router does not have
// yet (the tenant routes).
func PermissionChecker() func(p runs.Principal, method, route, tenant string) error {
	ps := permissionTable()
	return func(p runs.Principal, method, route, tenant string) error {
		if err := ps.check(p, method, route, tenant); err != nil {
			return err
		}
		return nil
	}
}
