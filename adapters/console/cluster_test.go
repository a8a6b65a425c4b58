package console_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// rows returns the text of each row of the table with id, cells joined by "|".
func rows(t *testing.T, body, id string) []string {
	t.Helper()
	m := regexp.MustCompile(`(?s)<table id="` + id + `">.*?<tbody>(.*?)</tbody>`).FindStringSubmatch(body)
	require.NotNil(t, m, "no table %s", id)
	var out []string
	for _, tr := range regexp.MustCompile(`(?s)<tr>(.*?)</tr>`).FindAllStringSubmatch(m[1], -1) {
		var cells []string
		for _, td := range regexp.MustCompile(`(?s)<td>(.*?)</td>`).FindAllStringSubmatch(tr[1], -1) {
			cells = append(cells, strings.TrimSpace(regexp.MustCompile(`<[^>]+>`).ReplaceAllString(td[1], "")))
		}
		out = append(out, strings.Join(cells, "|"))
	}
	return out
}

func TestTheClusterPageShowsMembersPoolsAndTheLeader(t *testing.T) {
	t.Parallel()
	c, _, _ := setup(t)
	c.signIn("viewer-token")
	rec := c.do("GET", "/ui/cluster", nil, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	body := rec.Body.String()
	require.Equal(t, []string{"default|1|1", "gpu|7|0"}, rows(t, body, "pools"),
		"pending per pool, and the live members that still take its runs (draining and stopped do not)")
	members := rows(t, body, "members")
	require.Len(t, members, 3)
	require.Equal(t, "member-a|h1|10.0.0.1:8080||default|2/4|live|2026-12-03 11:59:58Z (2s ago)", members[0])
	require.Contains(t, members[1], "|draining|")
	require.Contains(t, members[2], "|stopped|")
	require.Regexp(t, `Term <strong>12</strong> held by <code>member-a</code>`, body)

	// The cluster is not a tenant's business.
	acme := &client{t: t, h: c.h}
	acme.signIn("acme-token")
	require.Equal(t, http.StatusForbidden, acme.do("GET", "/ui/cluster", nil, nil).Code)
	require.NotContains(t, acme.do("GET", "/ui/runs", nil, nil).Body.String(), "/ui/cluster")
}

func TestAPageWithoutALivePartAnswersAFragmentRequestWhole(t *testing.T) {
	t.Parallel()
	c, _, _ := setup(t)
	c.signIn("viewer-token")
	rec := c.do("GET", "/ui/cluster?partial=1", nil, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Contains(t, rec.Body.String(), `<table id="members">`)
}
