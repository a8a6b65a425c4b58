package console_test

import (
	"html"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
)

func TestTheRunsPageFiltersAndPages(t *testing.T) {
	t.Parallel()
	c, f, _ := setup(t)
	c.signIn("viewer-token")
	q := url.Values{"status": {"running", "failed"}, "name": {"orders"}, "pool": {"gpu"},
		"label": {"team=sales, tier=gold"}, "since": {"2026-12-01T10:00"}, "until": {"2026-12-02T10:00"}}
	rec := c.do("GET", "/ui/runs?"+q.Encode(), nil, nil)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
	got := f.listed()
	require.Len(t, got, 1)
	require.Equal(t, runs.Filter{Status: []string{"running", "failed"}, Name: "orders", Pool: "gpu",
		Labels: map[string]string{"team": "sales", "tier": "gold"},
		Since:  time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC), Until: time.Date(2026, 12, 2, 10, 0, 0, 0, time.UTC),
		Limit: 50}, got[0])
	body := rec.Body.String()
	require.Contains(t, body, `value="running" checked`)
	require.Contains(t, body, `data-run="`+theRun.ID+`"`)
	// The next page keeps the filters and adds the cursor.
	next := regexpFind(t, body, `id="next-page"`, `href="([^"]+)" id="next-page"`)
	u, err := url.Parse(html.UnescapeString(next))
	require.NoError(t, err)
	require.Equal(t, "cursor-2", u.Query().Get("cursor"))
	require.Equal(t, []string{"running", "failed"}, u.Query()["status"])

	rec = c.do("GET", u.RequestURI(), nil, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "cursor-2", f.listed()[1].Cursor)
	require.Contains(t, rec.Body.String(), "First page")
	require.NotContains(t, rec.Body.String(), `id="next-page"`, "the last page has no next")

	// The live refresh answers the rows alone.
	rec = c.do("GET", "/ui/runs?partial=1", nil, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.NotContains(t, rec.Body.String(), "<html")
	require.Contains(t, rec.Body.String(), `<tr data-run="`+theRun.ID+`"`)

	// A filter the page cannot read is said on the page, and nothing is listed.
	rec = c.do("GET", "/ui/runs?label=nokey", nil, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Contains(t, rec.Body.String(), "label: write key=value")
	require.Len(t, f.listed(), 3)
}

func TestTheRunPageShowsShardsWithProgressAndRedactedErrors(t *testing.T) {
	t.Parallel()
	c, _, _ := setup(t)
	c.signIn("viewer-token")
	rec := c.do("GET", "/ui/runs/"+shardedRun.ID+"?partial=1", nil, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	body := rec.Body.String()
	require.Contains(t, body, `<progress max="1" value="1">`)
	require.Contains(t, body, `<progress max="1" value="0.4">`)
	require.Contains(t, body, "member-b")
	require.Contains(t, body, "sink_failed: dial postgres://REDACTED@db/x failed")
	require.NotContains(t, body, "hunter2")
	require.Equal(t, http.StatusNotFound, c.do("GET", "/ui/runs/nope", nil, nil).Code)
}
