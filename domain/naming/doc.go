// Package naming holds the one rule every user-chosen name follows (pipeline names, pools,
// template ids, tenants, label keys): `[a-z0-9][a-z0-9_.-]{0,62}`.
package naming
