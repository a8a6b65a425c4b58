package console_test

import (
	"context"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/configtext"
	"github.com/sluicehq/sluice/adapters/console"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/tests/historytest"
)

const versionsCfg = `version: 1
name: orders
params:
  region: { type: string, default: eu }
pipeline: {}
`

var versionRowRE = regexp.MustCompile(`<tr><td>v(\d+)</td>`)

// templateConsole is a console whose template pages read a real templates.Service over
// a history, with "shared" registered twice (acme may see it) and "private" once (beta only).
func templateConsole(t *testing.T) (http.Handler, *templates.Service) {
	t.Helper()
	svc := templates.New(templates.Deps{Store: historytest.Open(t), Loader: &execute.Loader{Decoder: configtext.Decoder{}}})
	ctx := context.Background()
	ada := tokens["admin-token"]
	for _, req := range []templates.RegisterRequest{
		{ID: "shared", Config: []byte(versionsCfg), Tenants: []string{"acme"}},
		{ID: "shared", Config: []byte(versionsCfg), Tenants: []string{"acme", "beta"}},
		{ID: "private", Config: []byte(versionsCfg), Tenants: []string{"beta"}},
	} {
		_, err := svc.Register(ctx, ada, req)
		require.NoError(t, err)
	}
	clk := &clock{now: time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)}
	h, err := console.New(console.Config{SessionKey: testKey, Now: clk.Now},
		console.Deps{Tokens: tokenTable(tokens), Signouts: historytest.Open(t), Runs: &fakeRuns{}, Templates: svc, Explain: explain})
	require.NoError(t, err)
	return h, svc
}

func TestTemplatePageListsEveryVersionNewestFirst(t *testing.T) {
	t.Parallel()
	h, _ := templateConsole(t)
	for _, token := range []string{"admin-token", "acme-token"} {
		c := &client{t: t, h: h}
		c.signIn(token)
		rec := c.do("GET", "/ui/templates/shared", nil, nil)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		var got []string
		for _, m := range versionRowRE.FindAllStringSubmatch(rec.Body.String(), -1) {
			got = append(got, m[1])
		}
		require.Equal(t, []string{"2", "1"}, got, token)
		require.Contains(t, rec.Body.String(), "<td>ada</td>", "who registered each version")
	}
}

func TestTenantCannotSeeAnotherTenantsTemplateVersions(t *testing.T) {
	t.Parallel()
	h, svc := templateConsole(t)
	c := &client{t: t, h: h}
	c.signIn("acme-token")
	rec := c.do("GET", "/ui/templates/private", nil, nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Empty(t, versionRowRE.FindAllString(rec.Body.String(), -1))
	require.False(t, strings.Contains(rec.Body.String(), `id="versions"`))

	_, err := svc.Versions(context.Background(), tokens["acme-token"], "private")
	require.ErrorIs(t, err, run.ErrNotFound)
	vs, err := svc.Versions(context.Background(), runs.Principal{Name: "b", Role: runs.Viewer, Tenant: "beta"}, "private")
	require.NoError(t, err)
	require.Len(t, vs, 1)
}
