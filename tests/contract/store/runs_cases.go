package storecontract

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

func runsCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"create and get round-trip every field": func(t *testing.T, e *env) {
			r := rec("orders", func(r *runs.Record) {
				r.Tenant, r.Pool, r.RunKey, r.TimeoutSecs = "acme", "gpu", "2026-01-01", 60
				r.Labels = map[string]string{"team": "data", "env": "prod"}
				r.TriggerKind, r.TemplateID, r.TemplateVersion, r.ShardCount = "template", "tpl-1", 3, 4
				r.ConfigSealed, r.Serial = true, true
				r.Callback = &runs.Callback{URL: "http://127.0.0.1:9/cb", On: []string{"failed"},
					ExtraFields: map[string]any{"ticket": "T-1"}}
			})
			e.create(t, r)
			got := e.get(t, r.ID)
			require.Equal(t, "pending", got.Status)
			require.Equal(t, r.Labels, got.Labels)
			require.Equal(t, r.Callback, got.Callback)
			for _, pair := range [][2]any{
				{r.Name, got.Name}, {r.Tenant, got.Tenant}, {r.Pool, got.Pool}, {r.RunKey, got.RunKey},
				{r.TimeoutSecs, got.TimeoutSecs}, {r.TriggerKind, got.TriggerKind}, {r.TemplateID, got.TemplateID},
				{r.TemplateVersion, got.TemplateVersion}, {r.ShardCount, got.ShardCount}, {r.Config, got.Config},
				{r.ConfigSealed, got.ConfigSealed}, {r.Serial, got.Serial}, {r.RunDate, got.RunDate},
				{r.MaxAttempts, got.MaxAttempts},
			} {
				require.Equal(t, pair[0], pair[1])
			}
			require.Equal(t, r.CreatedAt.Truncate(time.Millisecond).UnixMilli(), got.CreatedAt.UnixMilli())
			require.Equal(t, r.LogicalAt.UnixMilli(), got.LogicalAt.UnixMilli())
			require.Zero(t, got.Attempt)
			require.Empty(t, got.Attempts)
			require.Empty(t, got.Owner)
			require.True(t, got.ClaimedAt.IsZero() && got.StartedAt.IsZero() && got.FinishedAt.IsZero())
		},
		"a duplicate id is a conflict and other statuses are refused": func(t *testing.T, e *env) {
			r := e.create(t, rec("p"))
			dup := rec("p")
			dup.ID = r.ID
			_, err := e.s.Create(e.ctx, dup, nil)
			require.ErrorIs(t, err, run.ErrConflict)
			_, err = e.s.Create(e.ctx, rec("p", func(r *runs.Record) { r.Status = "running" }), nil)
			require.ErrorIs(t, err, run.ErrInvalidTransition)
			_, err = e.s.Create(e.ctx, rec("p", func(r *runs.Record) { r.ID = "" }), nil)
			require.ErrorContains(t, err, "no id")
			queued := e.create(t, rec("p", func(r *runs.Record) { r.Status = "queued" }))
			require.Equal(t, "queued", e.get(t, queued.ID).Status, "a queued status is kept as given")
		},
		"get of a missing run is not found": func(t *testing.T, e *env) {
			_, err := e.s.Get(e.ctx, "no-such-run")
			require.ErrorIs(t, err, run.ErrNotFound)
		},
		"list is newest first and paginates by keyset": func(t *testing.T, e *env) {
			var ids []string
			for range 7 {
				ids = append(ids, e.create(t, rec("p")).ID)
			}
			var seen []string
			after := ""
			for {
				page, err := e.s.List(e.ctx, runs.Filter{Limit: 3, After: after})
				require.NoError(t, err)
				if len(page) == 0 {
					break
				}
				require.LessOrEqual(t, len(page), 3)
				for _, r := range page {
					seen = append(seen, r.ID)
				}
				after = page[len(page)-1].ID
			}
			want := make([]string, len(ids))
			for i, id := range ids {
				want[len(ids)-1-i] = id
			}
			require.Equal(t, want, seen)
		},
		"a full page of the API's largest size still shows the next page": func(t *testing.T, e *env) {
			// The service asks for limit+1 rows to learn whether another page exists.
			for range runs.MaxListLimit + 2 {
				e.create(t, rec("big"))
			}
			page, err := e.s.List(e.ctx, runs.Filter{Limit: runs.MaxListLimit + 1})
			require.NoError(t, err)
			require.Len(t, page, runs.MaxListLimit+1)
			page, err = e.s.List(e.ctx, runs.Filter{Limit: 10_000})
			require.NoError(t, err)
			require.Len(t, page, store.MaxListLimit, "the store still bounds what one call reads")
		},
		"list limit defaults to 50": func(t *testing.T, e *env) {
			for range 60 {
				e.create(t, rec("many"))
			}
			page, err := e.s.List(e.ctx, runs.Filter{})
			require.NoError(t, err)
			require.Len(t, page, 50)
			page, err = e.s.List(e.ctx, runs.Filter{Limit: 10_000})
			require.NoError(t, err)
			require.Len(t, page, 60)
		},
		"list filters combine": func(t *testing.T, e *env) {
			base := time.Now().Add(-time.Hour).UTC()
			at := func(m int) func(*runs.Record) {
				// A run's id carries its created_at (runs.IDLead), as the run service makes it.
				return func(r *runs.Record) {
					r.CreatedAt = base.Add(time.Duration(m) * time.Minute)
					r.ID = idAt(r.CreatedAt.UnixMilli())
				}
			}
			a := e.create(t, rec("a", at(0), func(r *runs.Record) {
				r.Labels = map[string]string{"team": "x", "env": "prod"}
			}))
			b := e.create(t, rec("a", at(10), func(r *runs.Record) {
				r.Labels = map[string]string{"team": "x", "env": "dev"}
				r.Pool, r.RunKey = "gpu", "k1"
			}))
			c := e.create(t, rec("c", at(20), func(r *runs.Record) { r.Tenant = "acme"; r.Labels = map[string]string{"team": "y"} }))
			_, ok, err := e.s.CancelQueued(e.ctx, c.ID, nil)
			require.NoError(t, err)
			require.True(t, ok)
			claimed, err := e.s.Claim(e.ctx, e.owner, []string{"gpu"}, 5, longTTL)
			require.NoError(t, err)
			require.Len(t, claimed, 1)
			ids := func(f runs.Filter) []string {
				t.Helper()
				page, err := e.s.List(e.ctx, f)
				require.NoError(t, err)
				var out []string
				for _, r := range page {
					out = append(out, r.ID)
				}
				return out
			}
			require.Equal(t, []string{b.ID, a.ID}, ids(runs.Filter{Labels: map[string]string{"team": "x"}}))
			require.Equal(t, []string{a.ID}, ids(runs.Filter{Labels: map[string]string{"team": "x", "env": "prod"}}), "labels AND")
			// One label drives the list through its own index: every other filter still holds.
			require.Equal(t, []string{b.ID}, ids(runs.Filter{Labels: map[string]string{"team": "x"}, Status: []string{"running"}}))
			require.Equal(t, []string{a.ID}, ids(runs.Filter{Labels: map[string]string{"team": "x"}, After: b.ID}), "next page")
			require.Equal(t, []string{b.ID}, ids(runs.Filter{Labels: map[string]string{"team": "x"}, Limit: 1}))
			require.Equal(t, []string{a.ID}, ids(runs.Filter{Labels: map[string]string{"team": "x"}, Until: base.Add(5 * time.Minute)}))
			require.Equal(t, []string{b.ID}, ids(runs.Filter{Labels: map[string]string{"team": "x"}, Since: base.Add(5 * time.Minute), Pool: "gpu", RunKey: "k1", Name: "a"}))
			require.Equal(t, []string{c.ID}, ids(runs.Filter{Labels: map[string]string{"team": "y"}, Tenant: "acme"}))
			require.Empty(t, ids(runs.Filter{Labels: map[string]string{"team": "y"}, TenantSet: true}), "the label's run is a tenant's")
			require.Empty(t, ids(runs.Filter{Labels: map[string]string{"team": "z"}}))
			require.Empty(t, ids(runs.Filter{Labels: map[string]string{"team": "y", "env": "prod"}}))
			require.Equal(t, []string{c.ID}, ids(runs.Filter{Status: []string{"cancelled"}}))
			require.Equal(t, []string{c.ID, a.ID}, ids(runs.Filter{Status: []string{"cancelled", "pending"}}), "status IN")
			require.Equal(t, []string{b.ID}, ids(runs.Filter{Status: []string{"running"}}))
			require.Equal(t, []string{b.ID, a.ID}, ids(runs.Filter{Name: "a"}))
			require.Equal(t, []string{b.ID}, ids(runs.Filter{Pool: "gpu"}))
			require.Equal(t, []string{b.ID}, ids(runs.Filter{RunKey: "k1"}))
			require.Equal(t, []string{c.ID}, ids(runs.Filter{Tenant: "acme"}))
			require.Equal(t, []string{b.ID, a.ID}, ids(runs.Filter{TenantSet: true}), "untenanted only")
			require.Equal(t, []string{c.ID, b.ID}, ids(runs.Filter{Since: base.Add(10 * time.Minute)}), "since is inclusive")
			require.Equal(t, []string{b.ID, a.ID}, ids(runs.Filter{Until: base.Add(20 * time.Minute)}), "until is exclusive")
			require.Equal(t, []string{b.ID}, ids(runs.Filter{Since: base.Add(5 * time.Minute), Until: base.Add(15 * time.Minute)}))
		},
		"run_key answers the existing run": func(t *testing.T, e *env) {
			first := e.create(t, rec("daily", func(r *runs.Record) { r.RunKey = "2026-03-01" }))
			res, err := e.s.Create(e.ctx, rec("daily", func(r *runs.Record) { r.RunKey = "2026-03-01" }), nil)
			require.NoError(t, err)
			require.Equal(t, runs.CreateResult{RunID: first.ID, Status: "pending"}, res)
			// The key is unique per pipeline key only.
			e.create(t, rec("other", func(r *runs.Record) { r.RunKey = "2026-03-01" }))
			e.create(t, rec("daily", func(r *runs.Record) { r.RunKey = "2026-03-01"; r.Tenant = "acme" }))
			page, err := e.s.List(e.ctx, runs.Filter{RunKey: "2026-03-01"})
			require.NoError(t, err)
			require.Len(t, page, 3)
		},
		"idempotency key: fresh, replay, conflict, deleted": func(t *testing.T, e *env) {
			key := func(fp string) *runs.Idempotency {
				return &runs.Idempotency{Scope: "acme", Key: "k-1", Fingerprint: fp}
			}
			first := rec("p")
			res, err := e.s.Create(e.ctx, first, key("fp-1"))
			require.NoError(t, err)
			require.Equal(t, runs.CreateResult{Created: true, RunID: first.ID, Status: "pending"}, res)

			res, err = e.s.Create(e.ctx, rec("p"), key("fp-1"))
			require.NoError(t, err)
			require.Equal(t, runs.CreateResult{RunID: first.ID, Status: "pending", Fingerprint: "fp-1"}, res, "replay")

			res, err = e.s.Create(e.ctx, rec("p"), key("fp-2"))
			require.NoError(t, err)
			require.False(t, res.Created)
			require.Equal(t, "fp-1", res.Fingerprint, "a conflict shows the stored fingerprint")

			other := rec("p")
			res, err = e.s.Create(e.ctx, other, &runs.Idempotency{Scope: "other", Key: "k-1", Fingerprint: "fp-1"})
			require.NoError(t, err)
			require.True(t, res.Created, "keys are scoped")

			_, _, err = e.s.CancelQueued(e.ctx, first.ID, nil)
			require.NoError(t, err)
			require.NoError(t, e.s.Delete(e.ctx, first.ID))
			res, err = e.s.Create(e.ctx, rec("p"), key("fp-1"))
			require.NoError(t, err)
			require.Equal(t, runs.CreateResult{RunID: first.ID, Fingerprint: "fp-1", RunDeleted: true}, res)
			total, err := e.s.List(e.ctx, runs.Filter{})
			require.NoError(t, err)
			require.Len(t, total, 1, "replays store nothing")
		},
		"an idempotent replay that matches a run_key stores nothing": func(t *testing.T, e *env) {
			e.create(t, rec("p", func(r *runs.Record) { r.RunKey = "rk" }))
			idem := &runs.Idempotency{Scope: "s", Key: "new-key", Fingerprint: "f"}
			res, err := e.s.Create(e.ctx, rec("p", func(r *runs.Record) { r.RunKey = "rk" }), idem)
			require.NoError(t, err)
			require.False(t, res.Created)
			// The key was not kept: a later submit with it is fresh.
			res, err = e.s.Create(e.ctx, rec("p"), idem)
			require.NoError(t, err)
			require.True(t, res.Created)
		},
		"16 concurrent submits of one key create exactly one run": func(t *testing.T, e *env) {
			var wg sync.WaitGroup
			results := make([]runs.CreateResult, 16)
			errs := make([]error, 16)
			for i := range 16 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					results[i], errs[i] = e.s.Create(e.ctx, rec("p"), &runs.Idempotency{Scope: "acme", Key: "once", Fingerprint: "fp"})
				}()
			}
			wg.Wait()
			created, ids := 0, map[string]bool{}
			for i := range results {
				require.NoError(t, errs[i])
				if results[i].Created {
					created++
				}
				ids[results[i].RunID] = true
			}
			require.Equal(t, 1, created)
			require.Len(t, ids, 1, "every submit answers the same run")
			page, err := e.s.List(e.ctx, runs.Filter{})
			require.NoError(t, err)
			require.Len(t, page, 1)
		},
		"delete removes only terminal runs": func(t *testing.T, e *env) {
			r := e.create(t, rec("p", func(r *runs.Record) { r.Labels = map[string]string{"a": "b"} }))
			require.ErrorIs(t, e.s.Delete(e.ctx, r.ID), run.ErrConflict)
			require.NoError(t, e.s.AppendLogs(e.ctx, r.ID, logLines(3, "x")))
			_, _, err := e.s.CancelQueued(e.ctx, r.ID, nil)
			require.NoError(t, err)
			require.NoError(t, e.s.Delete(e.ctx, r.ID))
			_, err = e.s.Get(e.ctx, r.ID)
			require.ErrorIs(t, err, run.ErrNotFound)
			_, err = e.s.Logs(e.ctx, r.ID, 0, 10)
			require.ErrorIs(t, err, run.ErrNotFound)
			page, err := e.s.List(e.ctx, runs.Filter{Labels: map[string]string{"a": "b"}})
			require.NoError(t, err)
			require.Empty(t, page)
			require.ErrorIs(t, e.s.Delete(e.ctx, r.ID), run.ErrNotFound)
		},
		"cancel of a queued or pending run": func(t *testing.T, e *env) {
			r := e.create(t, rec("p"))
			got, ok, err := e.s.CancelQueued(e.ctx, r.ID, nil)
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, "cancelled", got.Status)
			require.False(t, got.FinishedAt.IsZero())
			again, ok, err := e.s.CancelQueued(e.ctx, r.ID, nil)
			require.NoError(t, err)
			require.False(t, ok, "a terminal run is returned unchanged")
			require.Equal(t, "cancelled", again.Status)

			c := e.claimOne(t, "q", longTTL)
			got, ok, err = e.s.CancelQueued(e.ctx, c.ID, nil)
			require.NoError(t, err)
			require.False(t, ok)
			require.Equal(t, "running", got.Status)
			_, _, err = e.s.CancelQueued(e.ctx, "missing", nil)
			require.ErrorIs(t, err, run.ErrNotFound)
		},
		"request cancel flags running runs only": func(t *testing.T, e *env) {
			c := e.claimOne(t, "p", longTTL)
			pending := e.create(t, rec("q"))
			require.False(t, e.requestCancel(t, c.ID), "a running run ends when its owner stops it")
			require.True(t, e.get(t, c.ID).CancelRequested)
			flagged, err := e.s.CancelRequested(e.ctx, []string{c.ID, pending.ID, "missing"})
			require.NoError(t, err)
			require.Equal(t, []string{c.ID}, flagged)
			_, err = e.s.RequestCancel(e.ctx, pending.ID)
			require.ErrorIs(t, err, run.ErrConflict)
			_, err = e.s.RequestCancel(e.ctx, "missing")
			require.ErrorIs(t, err, run.ErrNotFound)
		},
		"counts": func(t *testing.T, e *env) {
			e.create(t, rec("a"))
			e.create(t, rec("b", func(r *runs.Record) { r.Pool = "gpu" }))
			e.create(t, rec("b", func(r *runs.Record) { r.Pool = "gpu" }))
			e.create(t, rec("s", func(r *runs.Record) { r.Serial = true }))
			e.create(t, rec("s", func(r *runs.Record) { r.Serial = true })) // queued
			n, err := e.s.CountQueued(e.ctx)
			require.NoError(t, err)
			require.Equal(t, 5, n)
			byPool, err := e.s.PendingByPool(e.ctx)
			require.NoError(t, err)
			require.Equal(t, map[string]int{"default": 2, "gpu": 2}, byPool)
			byStatus, err := e.s.CountByStatus(e.ctx)
			require.NoError(t, err)
			require.Equal(t, map[string]int{"pending": 4, "queued": 1}, byStatus)
		},
	}
}
