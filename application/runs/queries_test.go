package runs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/configtext"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// seed stores runs directly: ids r00…, created a minute apart, tenant by index.
func seed(h *harness, n int, tenant func(i int) string) []string {
	var ids []string
	for i := range n {
		id := fmt.Sprintf("r%02d", i)
		h.store.put(&runs.Record{
			ID: id, Name: "orders", Pool: "default", Status: "pending", Tenant: tenant(i),
			Labels: map[string]string{"n": fmt.Sprint(i % 2)}, Config: baseConfig,
			CreatedAt: epoch.Add(time.Duration(i) * time.Minute),
		})
		ids = append(ids, id)
	}
	return ids
}

func TestGetHidesOtherTenantsAndTheConfig(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	seed(h, 3, func(i int) string { return []string{"", "acme", "globex"}[i] })

	rec, err := h.svc.Get(ctx, viewer, "r01")
	require.NoError(t, err)
	require.Equal(t, "acme", rec.Tenant)
	require.Empty(t, rec.Config, "the run resource never carries the config")

	_, err = h.svc.Get(ctx, acme, "r01")
	require.NoError(t, err)
	for _, id := range []string{"r00", "r02"} {
		_, err = h.svc.Get(ctx, acme, id)
		require.ErrorIs(t, err, run.ErrNotFound, "another tenant's run is not found, not forbidden")
	}
	_, err = h.svc.Get(ctx, viewer, "nope")
	require.ErrorIs(t, err, run.ErrNotFound)
	_, err = h.svc.Get(ctx, runs.Principal{Name: "nobody"}, "r00")
	require.ErrorIs(t, err, runs.ErrForbidden)
}

func TestListPagesWithOpaqueCursor(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	seed(h, 7, func(int) string { return "" })

	var got []string
	cursor := ""
	pages := 0
	for {
		page, err := h.svc.List(ctx, viewer, runs.Filter{Limit: 3, Cursor: cursor})
		require.NoError(t, err)
		pages++
		for _, r := range page.Runs {
			require.Empty(t, r.Config)
			got = append(got, r.ID)
		}
		if page.NextCursor == "" {
			break
		}
		require.NotContains(t, page.NextCursor, "r0", "the cursor is opaque")
		cursor = page.NextCursor
	}
	require.Equal(t, 3, pages)
	require.Equal(t, []string{"r06", "r05", "r04", "r03", "r02", "r01", "r00"}, got, "newest first, each once")

	// An exact last page has no next cursor.
	page, err := h.svc.List(ctx, viewer, runs.Filter{Limit: 7})
	require.NoError(t, err)
	require.Len(t, page.Runs, 7)
	require.Empty(t, page.NextCursor)

	page, err = h.svc.List(ctx, viewer, runs.Filter{})
	require.NoError(t, err)
	require.Len(t, page.Runs, 7, "default limit 50")

	page, err = h.svc.List(ctx, viewer, runs.Filter{Labels: map[string]string{"n": "1"}, Status: []string{"pending"}})
	require.NoError(t, err)
	require.Len(t, page.Runs, 3)

	page, err = h.svc.List(ctx, viewer, runs.Filter{Name: "other"})
	require.NoError(t, err)
	require.NotNil(t, page.Runs)
	require.Empty(t, page.Runs)
}

func TestListRefusals(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	tests := map[string]struct {
		f     runs.Filter
		field string
	}{
		"limit too big":  {runs.Filter{Limit: 501}, "limit"},
		"limit negative": {runs.Filter{Limit: -1}, "limit"},
		"cursor garbage": {runs.Filter{Cursor: "!!!"}, "cursor"},
		"cursor ctrl":    {runs.Filter{Cursor: "AAE"}, "cursor"},
		"status":         {runs.Filter{Status: []string{"done"}}, "status[0]"},
		"name":           {runs.Filter{Name: "Bad Name"}, "name"},
		"label":          {runs.Filter{Labels: map[string]string{"A": "b"}}, "label"},
		"range":          {runs.Filter{Since: epoch, Until: epoch}, "until"},
	}
	for name, tc := range tests {
		_, err := h.svc.List(ctx, viewer, tc.f)
		require.ErrorIs(t, err, runs.ErrInvalidRequest, name)
		var ire *runs.InvalidRequestError
		require.ErrorAs(t, err, &ire, name)
		require.Equal(t, tc.field, ire.Field, name)
	}
	page, err := h.svc.List(ctx, viewer, runs.Filter{Limit: 500})
	require.NoError(t, err, "500 is allowed")
	require.Empty(t, page.NextCursor)
}

func TestListForcesTheTenantOfATenantPrincipal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	seed(h, 6, func(i int) string { return []string{"", "acme", "globex"}[i%3] })

	page, err := h.svc.List(ctx, acme, runs.Filter{Tenant: "globex"})
	require.NoError(t, err)
	require.Len(t, page.Runs, 2)
	for _, r := range page.Runs {
		require.Equal(t, "acme", r.Tenant)
	}
	page, err = h.svc.List(ctx, viewer, runs.Filter{TenantSet: true})
	require.NoError(t, err)
	require.Len(t, page.Runs, 2, "untenanted runs only")
	page, err = h.svc.List(ctx, viewer, runs.Filter{})
	require.NoError(t, err)
	require.Len(t, page.Runs, 6)
}

func TestLogs(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	seed(h, 2, func(i int) string { return []string{"acme", "globex"}[i] })
	for i := int64(1); i <= 5; i++ {
		h.store.appendLogs("r00", fmt.Sprint("line ", i))
	}

	page, err := h.svc.Logs(ctx, acme, "r00", 0, 2)
	require.NoError(t, err)
	require.Len(t, page.Lines, 2)
	require.Equal(t, int64(2), page.Next)
	require.False(t, page.Done)

	page, err = h.svc.Logs(ctx, viewer, "r00", page.Next, 0)
	require.NoError(t, err)
	require.Len(t, page.Lines, 3)
	require.Equal(t, int64(5), page.Next)
	require.False(t, page.Done, "a pending run may still log")

	h.store.setStatus("r00", run.Completed)
	page, err = h.svc.Logs(ctx, viewer, "r00", 5, 0)
	require.NoError(t, err)
	require.Empty(t, page.Lines)
	require.NotNil(t, page.Lines)
	require.Equal(t, int64(5), page.Next)
	require.True(t, page.Done)

	_, err = h.svc.Logs(ctx, acme, "r01", 0, 0)
	require.ErrorIs(t, err, run.ErrNotFound)
	_, err = h.svc.Logs(ctx, viewer, "r00", 0, 10001)
	require.ErrorIs(t, err, runs.ErrInvalidRequest)
	_, err = h.svc.Logs(ctx, viewer, "r00", -1, 0)
	require.ErrorIs(t, err, runs.ErrInvalidRequest)
}

// Follow marks the run for the history (its end is then announced to every member), only
// for a principal that may read it, and only while the run has not ended.
func TestFollowMarksAVisibleRunThatHasNotEnded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	seed(h, 3, func(i int) string { return []string{"acme", "globex", "acme"}[i] })

	require.ErrorIs(t, h.svc.Follow(ctx, acme, "r01"), run.ErrNotFound, "another tenant's run is not found")
	require.ErrorIs(t, h.svc.Follow(ctx, runs.Principal{Name: "nobody"}, "r00"), runs.ErrForbidden)
	require.ErrorIs(t, h.svc.Follow(ctx, viewer, "nope"), run.ErrNotFound)
	require.False(t, h.store.get("r01").Followed)
	require.False(t, h.store.get("r00").Followed)

	require.NoError(t, h.svc.Follow(ctx, acme, "r00"))
	require.True(t, h.store.get("r00").Followed)

	h.store.setStatus("r02", run.Completed)
	require.NoError(t, h.svc.Follow(ctx, viewer, "r02"), "following a run that ended is no error")
	require.False(t, h.store.get("r02").Followed, "its end needs no announcement")
}

func TestAuditIsAdminOnlyAndRedacted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	r := req(operator, baseConfig)
	// A label holding a value the loader registered as secret, and one with URL credentials.
	r.Labels = map[string]string{"src": "postgres://app:s3cr3t-pw@db/wh", "hook": "https://u:p4ss@x.example/y"}
	h.submit(t, r)

	_, err := h.svc.Audit(ctx, operator, 0, 0)
	require.ErrorIs(t, err, runs.ErrForbidden)
	_, err = h.svc.Audit(ctx, globex, 0, 0)
	require.ErrorIs(t, err, runs.ErrForbidden)
	_, err = h.svc.Audit(ctx, admin, 0, 1001)
	require.ErrorIs(t, err, runs.ErrInvalidRequest)

	entries, err := h.svc.Audit(ctx, admin, 0, 0)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	b, err := json.Marshal(entries[0].Details)
	require.NoError(t, err)
	require.NotContains(t, string(b), "s3cr3t-pw")
	require.NotContains(t, string(b), "p4ss")
	require.Contains(t, string(b), "https://***@x.example/y")

	entries, err = h.svc.Audit(ctx, admin, entries[0].Seq, 0)
	require.NoError(t, err)
	require.Empty(t, entries)
}

func TestConfigIsRedacted(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	text := `version: 1
name: orders
params:
  pw: { type: string, secret: true }
pipeline:
  source:
    type: gen
    config: { count: 10, api_token: tok-123, cursor_col: "postgres://reader:rpw@h/db", ratio: 0.25, strict: true }
  sink:
    type: db
    config:
      connection_url: "postgres://app:${env:DB_PASS}@db/wh"
      table_name: "t_s3cr3t-pw"
      password: hunter2-literal
      key: [id]
      secret_access_key: [pem-line-1]
`
	h.redactor.Register("s3cr3t-pw")
	h.store.put(&runs.Record{ID: "r1", Name: "orders", Status: "completed", Config: text})
	h.store.put(&runs.Record{ID: "r2", Name: "orders", Status: "completed", Config: text, Tenant: "acme"})

	out, err := h.svc.Config(ctx, operator, "r1")
	require.NoError(t, err)
	for _, secret := range []string{"tok-123", "hunter2-literal", "pem-line-1", "rpw", "reader", "s3cr3t-pw", "${env:DB_PASS}"} {
		require.NotContains(t, out, secret)
	}
	require.Contains(t, out, `"connection_url": "postgres://***@db/wh"`)
	require.Contains(t, out, `"cursor_col": "postgres://***@h/db"`)
	require.Contains(t, out, `"password": "***"`)
	require.Contains(t, out, `"api_token": "***"`)
	require.Contains(t, out, `"count": 10`, "types are kept")
	require.Contains(t, out, `"ratio": 0.25`)
	require.Contains(t, out, `"strict": true`)
	require.Contains(t, out, `"secret": true`, "a param's secret flag is a flag, not a secret")
	require.Contains(t, out, "\"secret_access_key\": [\n          \"***\"\n        ]", "every leaf under a sensitive key, structure kept")
	require.Contains(t, out, "\"key\": [\n          \"id\"\n        ]", "a key column list is not a secret (SPEC §14.3)")
	require.Contains(t, out, `"table_name": "t_[secret]"`)
	require.Less(t, strings.Index(out, `"version"`), strings.Index(out, `"pipeline"`), "document order is kept")
	require.Less(t, strings.Index(out, `"source"`), strings.Index(out, `"sink"`))

	// The answer is a config again: it decodes, and JSON is valid YAML.
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(out), &v))
	_, err = configtext.Decode([]byte(out))
	require.NoError(t, err)

	_, err = h.svc.Config(ctx, viewer, "r1")
	require.ErrorIs(t, err, runs.ErrForbidden)
	_, err = h.svc.Config(ctx, acme, "r2")
	require.ErrorIs(t, err, runs.ErrForbidden, "never for a tenant principal, even of its own run")
	_, err = h.svc.Config(ctx, admin, "missing")
	require.ErrorIs(t, err, run.ErrNotFound)
}

func TestShardsPageByIndex(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx := context.Background()
	seed(h, 1, func(int) string { return "" })
	h.store.planShards("r00", 5)

	first, err := h.svc.Shards(ctx, viewer, "r00", "", 2)
	require.NoError(t, err)
	require.Equal(t, []int{0, 1}, indexes(first.Shards))
	require.NotEmpty(t, first.NextCursor)
	second, err := h.svc.Shards(ctx, viewer, "r00", first.NextCursor, 2)
	require.NoError(t, err)
	require.Equal(t, []int{2, 3}, indexes(second.Shards))
	last, err := h.svc.Shards(ctx, viewer, "r00", second.NextCursor, 2)
	require.NoError(t, err)
	require.Equal(t, []int{4}, indexes(last.Shards))
	require.Empty(t, last.NextCursor, "the last page has no next cursor")

	none, err := h.svc.Shards(ctx, viewer, "r00", "", 0)
	require.NoError(t, err)
	require.Len(t, none.Shards, 5, "limit 0 takes the default page size")

	for _, c := range []string{"abc", "s-1", "r00"} {
		_, err := h.svc.Shards(ctx, viewer, "r00", c, 2)
		require.ErrorIs(t, err, runs.ErrInvalidRequest, c)
	}
	_, err = h.svc.Shards(ctx, viewer, "r00", "", runs.MaxListLimit+1)
	require.ErrorIs(t, err, runs.ErrInvalidRequest)
	_, err = h.svc.Shards(ctx, viewer, "nope", "", 2)
	require.ErrorIs(t, err, run.ErrNotFound)
}

func indexes(shards []runs.ShardRecord) []int {
	out := make([]int, len(shards))
	for i, sh := range shards {
		out[i] = sh.Index
	}
	return out
}
