package http_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	sluicehttp "github.com/sluicehq/sluice/adapters/http"
	"github.com/sluicehq/sluice/application/runs"
)

// TestPermissionTable checks every (route, caller) pair against SPEC §2.2, written out by
// hand rather than derived from the table under test.
func TestPermissionTable(t *testing.T) {
	t.Parallel()
	const (
		ok  = 0 // any 2xx
		u   = http.StatusUnauthorized
		f   = http.StatusForbidden
		nf  = http.StatusNotFound
		bad = "wrong-token"
	)
	type route struct{ method, path, body string }
	routes := []route{
		{"GET", "/v1/runs", ""},
		{"GET", "/v1/runs/r-acme", ""},
		{"GET", "/v1/runs/r-acme/shards", ""},
		{"GET", "/v1/runs/r-acme/logs", ""},
		{"GET", "/v1/runs/r-acme/config", ""},
		{"GET", "/v1/connectors", ""},
		{"GET", "/v1/openapi.json", ""},
		{"POST", "/v1/runs", `{"config":"a: 1"}`},
		{"POST", "/v1/runs/r-acme/cancel", ""},
		{"POST", "/v1/runs/r-acme/rollback", ""},
		{"DELETE", "/v1/runs/r-acme", ""},
		{"GET", "/v1/audit", ""},
	}
	//                     runs  get shards logs config conn  oapi submit cancel rollb delete audit
	want := map[string][]int{
		// The API document is open: a client is generated before anyone has a token.
		"":            {u, u, u, u, u, u, ok, u, u, u, u, u},
		bad:           {u, u, u, u, u, u, ok, u, u, u, u, u},
		viewerToken:   {ok, ok, ok, ok, f, ok, ok, f, f, f, f, f},
		operatorToken: {ok, ok, ok, ok, ok, ok, ok, ok, ok, ok, f, f},
		adminToken:    {ok, ok, ok, ok, ok, ok, ok, ok, ok, ok, ok, ok},
		tenantToken:   {ok, ok, ok, ok, f, f, ok, f, f, f, f, f},
		tenantOpToken: {ok, ok, ok, ok, f, f, ok, f, ok, f, f, f},
	}
	for token, statuses := range want {
		require.Len(t, statuses, len(routes))
		for i, r := range routes {
			name := strings.TrimSuffix(token, "-0123456789") + " " + r.method + " " + r.path
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				e := newEnv(t)
				e.runs.get = func(_ runs.Principal, id string) (*runs.Record, error) {
					rec := sampleRecord(id)
					rec.Tenant = "acme"
					return rec, nil
				}
				var body any
				if r.body != "" {
					body = r.body
				}
				rec := e.do(t, r.method, r.path, token, body)
				if statuses[i] == ok {
					require.True(t, rec.Code >= 200 && rec.Code < 300, "want 2xx, got %d: %s", rec.Code, rec.Body.String())
					return
				}
				require.Equal(t, statuses[i], rec.Code, rec.Body.String())
				code, _, _ := errorOf(t, rec)
				if statuses[i] == u {
					require.Equal(t, "unauthorized", code)
					require.Equal(t, `Bearer realm="sluice"`, rec.Header().Get("WWW-Authenticate"))
				} else {
					require.Equal(t, "forbidden", code)
				}
				if rec.Code == u || rec.Code == f {
					require.Zero(t, e.runs.callCount(), "a refused request must not reach the service")
				}
			})
		}
	}
}

func TestOpenRoutesNeedNoToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(_ *sluicehttp.Config, d *sluicehttp.Deps) {
		d.Metrics = http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("m 1\n")) })
	})
	for _, p := range []string{"/livez", "/readyz", "/metrics"} {
		rec := e.do(t, http.MethodGet, p, "", nil)
		require.Equal(t, http.StatusOK, rec.Code, p)
	}
}

func TestUnknownRoutes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Under /v1 the token comes first, so strangers learn nothing about which routes exist.
	rec := e.do(t, http.MethodGet, "/v1/nope", "", nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	rec = e.do(t, http.MethodGet, "/v1/nope", viewerToken, nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	code, _, _ := errorOf(t, rec)
	require.Equal(t, "not_found", code)
	// A known path with a wrong method is 405 with the allowed methods (after the token).
	rec = e.do(t, http.MethodPut, "/v1/runs", "", nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
	rec = e.do(t, http.MethodPut, "/v1/runs", adminToken, nil)
	require.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	require.Equal(t, "GET, POST", rec.Header().Get("Allow"))
	code, msg, _ := errorOf(t, rec)
	require.Equal(t, "method_not_allowed", code)
	require.Contains(t, msg, "allowed: GET, POST")
	rec = e.do(t, http.MethodPatch, "/v1/runs/r-1", adminToken, nil)
	require.Equal(t, http.StatusMethodNotAllowed, rec.Code)
	require.Equal(t, "GET, DELETE", rec.Header().Get("Allow"))
	rec = e.do(t, http.MethodGet, "/nope", "", nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
}

func TestAuthorizationHeaderForms(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for header, want := range map[string]int{
		"Bearer " + viewerToken:         http.StatusOK,
		"bearer " + viewerToken:         http.StatusOK,
		"Bearer  " + viewerToken + "  ": http.StatusOK,
		"Basic " + viewerToken:          http.StatusUnauthorized,
		"Bearer":                        http.StatusUnauthorized,
		"Bearer ":                       http.StatusUnauthorized,
		viewerToken:                     http.StatusUnauthorized,
		"Bearer " + viewerToken + "x":   http.StatusUnauthorized,
		"Bearer " + viewerToken[:10]:    http.StatusUnauthorized,
	} {
		rec := e.do(t, http.MethodGet, "/v1/runs", "", nil, "Authorization", header)
		require.Equal(t, want, rec.Code, "header %q", header)
	}
}

func TestSingleTokenIsAdmin(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *sluicehttp.Config, _ *sluicehttp.Deps) {
		c.Auth = sluicehttp.AuthConfig{Token: "only-one"}
	})
	rec := e.do(t, http.MethodDelete, "/v1/runs/r-1", "only-one", nil)
	require.Equal(t, http.StatusNoContent, rec.Code)
	require.Equal(t, runs.Principal{Name: sluicehttp.TokenPrincipalName, Role: runs.Admin}, e.runs.lastPrincipal())
	rec = e.do(t, http.MethodGet, "/v1/runs", viewerToken, nil)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
}

func TestDisabledAuthActsAsAdmin(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *sluicehttp.Config, _ *sluicehttp.Deps) { c.Auth = sluicehttp.AuthConfig{Disabled: true} })
	rec := e.do(t, http.MethodGet, "/v1/audit", "", nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, runs.Principal{Name: sluicehttp.AnonymousName, Role: runs.Admin}, e.runs.lastPrincipal())
}

func TestNoAuthConfiguredRefusesEveryone(t *testing.T) {
	t.Parallel()
	e := newEnv(t, func(c *sluicehttp.Config, _ *sluicehttp.Deps) { c.Auth = sluicehttp.AuthConfig{} })
	require.Equal(t, http.StatusUnauthorized, e.do(t, http.MethodGet, "/v1/runs", "", nil).Code)
	require.Equal(t, http.StatusUnauthorized, e.do(t, http.MethodGet, "/v1/runs", "x", nil).Code)
}

func TestPrincipalReachesTheService(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do(t, http.MethodGet, "/v1/runs/r-1", tenantToken, nil, "X-Ignored", "1")
	require.Equal(t, http.StatusNotFound, rec.Code, "the sample run is untenanted: hidden from a tenant principal")
	require.Equal(t, runs.Principal{Name: "acme-viewer", Role: runs.Viewer, Tenant: "acme"}, e.runs.lastPrincipal())
}

func TestTenantPrincipalListIsScoped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rec := e.do(t, http.MethodGet, "/v1/runs", tenantToken, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	f := e.runs.filters[0]
	require.Equal(t, "acme", f.Tenant)
	require.True(t, f.TenantSet)

	rec = e.do(t, http.MethodGet, "/v1/runs?tenant=globex", tenantToken, nil)
	require.Equal(t, http.StatusForbidden, rec.Code)
	rec = e.do(t, http.MethodGet, "/v1/runs?tenant=acme", tenantToken, nil)
	require.Equal(t, http.StatusOK, rec.Code)
}

func TestTenantPrincipalCannotReadOtherTenantsLogs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runs.get = func(_ runs.Principal, id string) (*runs.Record, error) {
		rec := sampleRecord(id)
		rec.Tenant = "globex"
		return rec, nil
	}
	for _, p := range []string{"/v1/runs/r-9/logs", "/v1/runs/r-9/shards", "/v1/runs/r-9"} {
		rec := e.do(t, http.MethodGet, p, tenantToken, nil)
		require.Equal(t, http.StatusNotFound, rec.Code, p)
	}
	require.NotContains(t, e.runs.calls, "logs")
}

func TestPermissionsForTenantRoutes(t *testing.T) {
	t.Parallel()
	ps := sluicehttp.PermissionChecker()
	acme := runs.Principal{Name: "a", Role: runs.Operator, Tenant: "acme"}
	acmeViewer := runs.Principal{Name: "v", Role: runs.Viewer, Tenant: "acme"}
	admin := runs.Principal{Name: "root", Role: runs.Admin}
	viewer := runs.Principal{Name: "vic", Role: runs.Viewer}
	route := "/v1/tenants/:tenant/templates/:id/runs"
	// A tenant operator runs its own tenant's templates, never another's; a tenant viewer
	// reads only (SPEC §2.2, §14.1).
	require.NoError(t, ps(acme, "POST", route, "acme"))
	require.ErrorContains(t, ps(acmeViewer, "POST", route, "acme"), "needs operator")
	require.Error(t, ps(acme, "POST", route, "globex"))
	require.Error(t, ps(acmeViewer, "POST", route, "globex"))
	require.Error(t, ps(runs.Principal{Name: "x", Role: "root", Tenant: "acme"}, "POST", route, "acme"), "an unknown role gets nothing")
	// A tenant route missing from the table is admin-only for tenant principals too.
	require.Error(t, ps(acme, "GET", "/v1/tenants/:tenant/runs", "acme"))
	// Untenanted principals follow the table.
	require.NoError(t, ps(admin, "POST", route, "acme"))
	require.Error(t, ps(viewer, "POST", route, "acme"))
	require.Error(t, ps(runs.Principal{Name: "nobody", Role: "superuser"}, "GET", "/v1/runs", ""), "unknown roles get nothing")
	require.Error(t, ps(viewer, "GET", "/v1/unlisted", ""), "unlisted routes are admin-only")
	require.NoError(t, ps(admin, "GET", "/v1/unlisted", ""))
}

func TestAuthConfigValidate(t *testing.T) {
	t.Parallel()
	good := sluicehttp.Principal{Name: "a", Token: "t1", Role: runs.Viewer}
	cases := map[string]struct {
		cfg  sluicehttp.AuthConfig
		want string
	}{
		"nothing":        {sluicehttp.AuthConfig{}, "--auth-token, --auth-config or --no-auth"},
		"both":           {sluicehttp.AuthConfig{Token: "x", Principals: []sluicehttp.Principal{good}}, "exclusive"},
		"disabled+token": {sluicehttp.AuthConfig{Disabled: true, Token: "x"}, "--no-auth cannot be combined"},
		"no name":        {sluicehttp.AuthConfig{Principals: []sluicehttp.Principal{{Token: "t", Role: runs.Admin}}}, "principal 1: name is required"},
		"no token":       {sluicehttp.AuthConfig{Principals: []sluicehttp.Principal{{Name: "b", Role: runs.Admin}}}, `"b"): token is required`},
		"bad role":       {sluicehttp.AuthConfig{Principals: []sluicehttp.Principal{{Name: "b", Token: "t", Role: "root"}}}, `role "root"`},
		"dup name":       {sluicehttp.AuthConfig{Principals: []sluicehttp.Principal{good, {Name: "a", Token: "t2", Role: runs.Admin}}}, "name is used twice"},
		"dup token":      {sluicehttp.AuthConfig{Principals: []sluicehttp.Principal{good, {Name: "b", Token: "t1", Role: runs.Admin}}}, "token is shared"},
	}
	for name, tc := range cases {
		err := tc.cfg.Validate()
		require.ErrorContains(t, err, tc.want, name)
		require.NotContains(t, err.Error(), "t1", "messages never carry tokens")
	}
	require.NoError(t, sluicehttp.AuthConfig{Token: "x"}.Validate())
	require.NoError(t, sluicehttp.AuthConfig{Disabled: true}.Validate())
	require.NoError(t, sluicehttp.AuthConfig{Principals: []sluicehttp.Principal{good}}.Validate())
}

func TestPermissionsTableIsWhatTheSpecSays(t *testing.T) {
	t.Parallel()
	got := map[string]sluicehttp.Permission{}
	for _, p := range sluicehttp.Permissions() {
		got[p.Method+" "+p.Route] = p
	}
	require.Equal(t, runs.Operator, got["GET /v1/runs/:id/config"].Role)
	require.False(t, got["GET /v1/runs/:id/config"].Tenant)
	require.Equal(t, runs.Admin, got["DELETE /v1/runs/:id"].Role)
	require.Equal(t, runs.Admin, got["GET /v1/audit"].Role)
	require.Equal(t, runs.Operator, got["POST /v1/runs"].Role)
}
