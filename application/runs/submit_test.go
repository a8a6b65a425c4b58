package runs_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/callback"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/pool"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/schedule"
)

func TestSubmitStoresARawPendingRun(t *testing.T) {
	t.Parallel()
	zone, err := time.LoadLocation("America/New_York")
	require.NoError(t, err)
	h := newHarness(t, withConfig(func(c *runs.Config) { c.Zone = zone; c.MaxAttempts = 5 }))

	r := req(operator, baseConfig)
	r.Labels = map[string]string{"team": "data"}
	r.TimeoutSecs = 60
	res := h.submit(t, r)
	require.Equal(t, "pending", res.Status)
	require.False(t, res.Replayed)

	rec, err := h.store.Get(context.Background(), res.RunID)
	require.NoError(t, err)
	require.Equal(t, "orders", rec.Name)
	require.Equal(t, "default", rec.Pool)
	require.Empty(t, rec.Tenant)
	require.Equal(t, "api", rec.TriggerKind)
	require.Equal(t, map[string]string{"team": "data"}, rec.Labels)
	require.Equal(t, baseConfig, rec.Config, "the RAW text is stored, directives unresolved")
	require.Contains(t, rec.Config, "${env:DB_URL}")
	require.Equal(t, epoch, rec.LogicalAt)
	require.Equal(t, "2026-05-01", rec.RunDate, "23:30 UTC is still May 1st in New York")
	require.Equal(t, 5, rec.MaxAttempts)
	require.Equal(t, 60, rec.TimeoutSecs)
	require.Equal(t, 1, rec.ShardCount)
	require.False(t, rec.Serial)
	require.Equal(t, epoch, rec.CreatedAt)
	require.Equal(t, 1, h.waker.count())
	require.Equal(t, []string{runs.ActionSubmitted}, h.store.auditActions())
	e := h.store.lastAudit()
	require.Equal(t, "olga", e.Actor)
	require.Equal(t, res.RunID, e.RunID)
	require.Equal(t, "orders", e.Details["name"])
	require.Equal(t, false, e.Details["replayed"])
}

func TestSubmitClockSetsLogicalInstantAndRunDate(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withConfig(func(c *runs.Config) { c.Zone = time.FixedZone("UTC+2", 7200) }))
	clk := time.Date(2026, 1, 31, 23, 0, 0, 0, time.UTC)
	r := req(operator, baseConfig)
	r.Clock = &clk
	res := h.submit(t, r)
	rec, err := h.store.Get(context.Background(), res.RunID)
	require.NoError(t, err)
	require.Equal(t, clk, rec.LogicalAt)
	require.Equal(t, "2026-02-01", rec.RunDate)
}

// A tick's run takes the schedule's zone for run_date, goes through CreateTick, and an
// overlap skip answers the reason instead of a run.
func TestSubmitTick(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.store.schedule("s1")
	term := h.store.term()
	berlin, err := time.LoadLocation("Europe/Berlin")
	require.NoError(t, err)
	at := time.Date(2026, 3, 28, 23, 30, 0, 0, time.UTC) // 2026-03-29 00:30 in Berlin
	r := req(admin, baseConfig)
	r.TriggerKind, r.Clock, r.Zone, r.RunKey = "schedule", &at, berlin, schedule.RunKey("s1", at)
	r.Tick = &runs.Tick{ScheduleID: "s1", Instant: at, Overlap: schedule.OverlapSkip, Epoch: term}
	first := h.submit(t, r)
	rec, err := h.store.Get(context.Background(), first.RunID)
	require.NoError(t, err)
	require.Equal(t, "2026-03-29", rec.RunDate, "run_date is in the schedule's zone")
	require.Equal(t, "pending", first.Status)

	later := at.Add(time.Hour)
	r.Clock, r.RunKey = &later, schedule.RunKey("s1", later)
	r.Tick = &runs.Tick{ScheduleID: "s1", Instant: later, Overlap: schedule.OverlapSkip, Epoch: term}
	skipped := h.submit(t, r)
	require.Equal(t, schedule.ReasonOverlap, skipped.Skipped)
	require.Empty(t, skipped.RunID)

	r.Tick.Epoch = term - 1
	_, err = h.svc.Submit(context.Background(), r)
	require.ErrorIs(t, err, run.ErrLeaseLost, "a deposed leader's tick is refused")
}

func TestSubmitNamePoolAndSerial(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withConfig(func(c *runs.Config) { c.Pools = []string{"default", "gpu"} }))
	incremental := strings.Replace(baseConfig, "pipeline:\n", "replication: {type: incremental, cursor: id}\npool: gpu\npipeline:\n", 1)

	r := req(operator, incremental)
	r.Name = "orders-2"
	first := h.submit(t, r)
	rec, err := h.store.Get(context.Background(), first.RunID)
	require.NoError(t, err)
	require.Equal(t, "orders-2", rec.Name, "the request name overrides the config's")
	require.Equal(t, "gpu", rec.Pool, "the config's pool applies when the request names none")
	require.True(t, rec.Serial, "incremental state makes the pipeline serial")
	require.Equal(t, "pending", first.Status)

	second := h.submit(t, r)
	require.Equal(t, "queued", second.Status, "a serial pipeline waits behind its active run")
	require.Equal(t, "queued", h.store.lastAudit().Details["status"])

	r.Pool = "default"
	third := h.submit(t, r)
	rec, err = h.store.Get(context.Background(), third.RunID)
	require.NoError(t, err)
	require.Equal(t, "default", rec.Pool, "the request pool wins over the config's")
}

func TestSubmitRefusals(t *testing.T) {
	t.Parallel()
	cb := func(url string, on ...string) *runs.Callback { return &runs.Callback{URL: url, On: on} }
	tests := []struct {
		name   string
		opts   []option
		edit   func(*runs.SubmitRequest)
		is     []error
		path   string // CallbackRefusedError.Path or the field of an InvalidRequestError
		inText []string
	}{
		{name: "draining", opts: []option{withConfig(func(c *runs.Config) { c.Draining = func() bool { return true } })}, is: []error{runs.ErrDraining}},
		{name: "queue full", opts: []option{withConfig(func(c *runs.Config) { c.MaxQueued = 1 })}, edit: func(r *runs.SubmitRequest) {}, is: []error{runs.ErrQueueFull}, inText: []string{"limit 1"}},
		{name: "pool unserved by request", edit: func(r *runs.SubmitRequest) { r.Pool = "gpu" }, is: []error{pool.ErrUnserved}, inText: []string{"gpu", "--pool"}},
		{name: "pool unserved by config", edit: func(r *runs.SubmitRequest) {
			r.Config = []byte(strings.Replace(baseConfig, "name: orders\n", "name: orders\npool: gpu\n", 1))
		}, is: []error{pool.ErrUnserved}},
		{name: "refused directive", edit: func(r *runs.SubmitRequest) {
			r.Config = []byte(strings.Replace(baseConfig, "${env:DB_URL}", "${env:SLUICE_VAULT_KEY}", 1))
		}, is: []error{execute.ErrDirectiveRefused}, inText: []string{"pipeline.sink.config.connection_url"}},
		{name: "file directive without allow dir", edit: func(r *runs.SubmitRequest) {
			r.Config = []byte(strings.Replace(baseConfig, "${env:DB_URL}", "${file:/etc/passwd}", 1))
		}, is: []error{execute.ErrDirectiveRefused}},
		{name: "unset env var", edit: func(r *runs.SubmitRequest) {
			r.Config = []byte(strings.Replace(baseConfig, "${env:DB_URL}", "${env:NOPE}", 1))
		}, is: []error{pipeline.ErrInvalidConfig}, inText: []string{"pipeline.sink.config.connection_url", "${env:NOPE}"}},
		{name: "invalid config", edit: func(r *runs.SubmitRequest) {
			r.Config = []byte(strings.Replace(baseConfig, "count: 10", "count: ten\n      colour: red", 1))
		}, is: []error{pipeline.ErrInvalidConfig}, inText: []string{"pipeline.source.config.count", "pipeline.source.config.colour"}},
		{name: "sharded into a file sink", edit: func(r *runs.SubmitRequest) {
			r.Config = []byte("version: 1\nname: orders\nshard: {count: 4}\npipeline:\n  source: {type: gen, config: {count: 10}}\n" +
				"  sink: {type: out, config: {path: out.csv}}\n")
		}, is: []error{pipeline.ErrShardRefused}, inText: []string{"several shards at once would clobber", "remove shard"}},
		{name: "syntax error", edit: func(r *runs.SubmitRequest) { r.Config = []byte("version: [1\n") }, is: []error{pipeline.ErrInvalidConfig}},
		{name: "empty config", edit: func(r *runs.SubmitRequest) { r.Config = nil }, is: []error{runs.ErrInvalidRequest}, path: "config"},
		{name: "bad name", edit: func(r *runs.SubmitRequest) { r.Name = "Orders!" }, is: []error{runs.ErrInvalidRequest}, path: "name"},
		{name: "bad pool", edit: func(r *runs.SubmitRequest) { r.Pool = "GPU" }, is: []error{runs.ErrInvalidRequest}, path: "pool"},
		{name: "bad label key", edit: func(r *runs.SubmitRequest) { r.Labels = map[string]string{"Team": "x"} }, is: []error{runs.ErrInvalidRequest}, path: "labels"},
		{name: "negative timeout", edit: func(r *runs.SubmitRequest) { r.TimeoutSecs = -1 }, is: []error{runs.ErrInvalidRequest}, path: "timeout_secs"},
		{name: "unknown trigger", edit: func(r *runs.SubmitRequest) { r.TriggerKind = "" }, is: []error{runs.ErrInvalidRequest}, path: "trigger_kind"},
		{name: "run key too long", edit: func(r *runs.SubmitRequest) { r.RunKey = strings.Repeat("k", 256) }, is: []error{runs.ErrInvalidRequest}, path: "run_key"},
		{name: "idempotency key with control char", edit: func(r *runs.SubmitRequest) { r.IdempotencyKey = "a\nb" }, is: []error{runs.ErrInvalidRequest}, path: "idempotency_key"},
		{name: "tenant principal for another tenant", edit: func(r *runs.SubmitRequest) { r.Principal = acme; r.Tenant = "globex" }, is: []error{runs.ErrForbidden}},
		{name: "tenant principal untenanted", edit: func(r *runs.SubmitRequest) { r.Principal = acme }, is: []error{runs.ErrForbidden}},
		{name: "viewer", edit: func(r *runs.SubmitRequest) { r.Principal = viewer }, is: []error{runs.ErrForbidden}},
		{name: "no role", edit: func(r *runs.SubmitRequest) { r.Principal = runs.Principal{Name: "x"} }, is: []error{runs.ErrForbidden}},
		{name: "callback metadata ip", edit: func(r *runs.SubmitRequest) { r.Callback = cb("http://169.254.169.254/latest") }, is: []error{runs.ErrCallbackRefused, callback.ErrRefused}, path: "callback.url"},
		{name: "callback link-local v6", edit: func(r *runs.SubmitRequest) { r.Callback = cb("http://[fe80::1]:8080/x") }, is: []error{runs.ErrCallbackRefused, callback.ErrRefused}, path: "callback.url"},
		{name: "callback metadata name", edit: func(r *runs.SubmitRequest) { r.Callback = cb("http://metadata.google.internal/computeMetadata/v1/") }, is: []error{runs.ErrCallbackRefused, callback.ErrRefused}, path: "callback.url"},
		{name: "callback name resolving to 169.254", edit: func(r *runs.SubmitRequest) { r.Callback = cb("https://evil.example.com/hook") }, is: []error{runs.ErrCallbackRefused, callback.ErrRefused}, path: "callback.url", inText: []string{"169.254.169.254"}},
		{name: "callback name resolving to fe80", edit: func(r *runs.SubmitRequest) { r.Callback = cb("https://sneaky.example/hook") }, is: []error{runs.ErrCallbackRefused, callback.ErrRefused}, path: "callback.url"},
		{name: "callback unresolvable", edit: func(r *runs.SubmitRequest) { r.Callback = cb("https://nowhere.invalid/hook") }, is: []error{runs.ErrCallbackRefused}, path: "callback.url"},
		{name: "callback scheme", edit: func(r *runs.SubmitRequest) { r.Callback = cb("ftp://hooks.example.com/x") }, is: []error{runs.ErrCallbackRefused}, path: "callback.url"},
		{name: "callback on", edit: func(r *runs.SubmitRequest) { r.Callback = cb("https://hooks.example.com/x", "failed", "running") }, is: []error{runs.ErrCallbackRefused}, path: "callback.on[1]"},
		{name: "callback extra field collides", edit: func(r *runs.SubmitRequest) {
			r.Callback = &runs.Callback{URL: "https://hooks.example.com/x", ExtraFields: map[string]any{"status": "ok"}}
		}, is: []error{runs.ErrCallbackRefused}, path: "callback.extra_fields.status"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, tc.opts...)
			if tc.name == "queue full" {
				h.submit(t, req(operator, baseConfig))
			}
			before := len(h.store.auditActions())
			r := req(operator, baseConfig)
			if tc.edit != nil {
				tc.edit(&r)
			}
			res, err := h.svc.Submit(context.Background(), r)
			require.Error(t, err)
			require.Empty(t, res.RunID)
			for _, target := range tc.is {
				require.ErrorIs(t, err, target)
			}
			if tc.path != "" {
				var cbErr *runs.CallbackRefusedError
				var reqErr *runs.InvalidRequestError
				switch {
				case errors.As(err, &cbErr):
					require.Equal(t, tc.path, cbErr.Path)
				case errors.As(err, &reqErr):
					require.Equal(t, tc.path, reqErr.Field)
				default:
					t.Fatalf("error %v names no path", err)
				}
			}
			for _, s := range tc.inText {
				require.Contains(t, err.Error(), s)
			}
			require.Len(t, h.store.auditActions(), before, "a refusal stores and audits nothing")
		})
	}
}

func TestSubmitInvalidConfigListsEveryPath(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	text := strings.Replace(baseConfig, "count: 10", "count: ten\n      colour: red", 1)
	_, err := h.svc.Submit(context.Background(), req(operator, text))
	require.ErrorIs(t, err, pipeline.ErrInvalidConfig)
	var paths []string
	for _, fe := range execute.FieldErrors(err) {
		paths = append(paths, fe.Path)
	}
	require.Contains(t, paths, "pipeline.source.config.count")
	require.Contains(t, paths, "pipeline.source.config.colour")
}

func TestSubmitCallbackNeverQuotesCredentials(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := req(operator, baseConfig)
	r.Callback = &runs.Callback{URL: "http://user:pa55word@169.254.169.254/x"}
	_, err := h.svc.Submit(context.Background(), r)
	require.ErrorIs(t, err, runs.ErrCallbackRefused)
	require.NotContains(t, err.Error(), "pa55word")
}

func TestSubmitCallbackAllowList(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withConfig(func(c *runs.Config) {
		c.CallbackAllowHosts = []string{"169.254.169.254", "metadata.google.internal", "hooks.internal"}
	}))
	for _, url := range []string{
		"http://169.254.169.254/hook",
		"http://metadata.google.internal/hook",
		"http://hooks.internal/hook", // resolves to 169.254.10.10, but the host is listed
		"https://hooks.example.com/hook",
		"http://127.0.0.1:9000/hook",
		"http://10.0.0.8/hook",
	} {
		r := req(operator, baseConfig)
		r.Callback = &runs.Callback{URL: url, On: []string{"failed", "completed", "failed"}}
		res := h.submit(t, r)
		rec, err := h.store.Get(context.Background(), res.RunID)
		require.NoError(t, err)
		require.Equal(t, url, rec.Callback.URL)
		require.Equal(t, []string{"completed", "failed"}, rec.Callback.On, "on is stored sorted, without repeats")
	}
	// Listed names do not open other link-local addresses.
	r := req(operator, baseConfig)
	r.Callback = &runs.Callback{URL: "http://169.254.0.1/hook"}
	_, err := h.svc.Submit(context.Background(), r)
	require.ErrorIs(t, err, runs.ErrCallbackRefused)
}

func TestSubmitInvalidAllowListFailsCallbacksOnly(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withConfig(func(c *runs.Config) { c.CallbackAllowHosts = []string{"http://x"} }))
	h.submit(t, req(operator, baseConfig))
	r := req(operator, baseConfig)
	r.Callback = &runs.Callback{URL: "https://hooks.example.com/x"}
	_, err := h.svc.Submit(context.Background(), r)
	require.ErrorContains(t, err, "--callback-allow-host")
}

func TestSubmitTenantPrincipal(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := req(acme, baseConfig)
	r.Tenant = "acme"
	r.TriggerKind = "tenant"
	res := h.submit(t, r)
	rec, err := h.store.Get(context.Background(), res.RunID)
	require.NoError(t, err)
	require.Equal(t, "acme", rec.Tenant)

	// A tenant viewer reads; running is for tenant operators and admins (SPEC §2.2, §14.1).
	r.Principal = runs.Principal{Name: "acme-viewer", Role: runs.Viewer, Tenant: "acme"}
	_, err = h.svc.Submit(context.Background(), r)
	require.ErrorIs(t, err, runs.ErrForbidden)
	require.ErrorContains(t, err, "operator")
	r.Principal = runs.Principal{Name: "acme-admin", Role: runs.Admin, Tenant: "acme"}
	h.submit(t, r)
	// An untenanted operator may stamp any tenant (template runs for a tenant).
	r.Principal = operator
	r.Tenant = "globex"
	h.submit(t, r)
}

// Directives that read the environment resolve only where the run's pool is served
// locally; a pool served by another member is checked for syntax and refusals only.
func TestSubmitResolvesOnlyForLocalPools(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withDeps(func(d *runs.Deps) { d.Admission = runs.StaticPools{"default", "remote"} }))
	missing := strings.Replace(baseConfig, "${env:DB_URL}", "${env:ONLY_ON_REMOTE}", 1)

	r := req(operator, missing)
	r.Pool = "remote"
	res := h.submit(t, r)
	require.Equal(t, "pending", res.Status)

	r.Pool = ""
	_, err := h.svc.Submit(context.Background(), r)
	require.ErrorIs(t, err, pipeline.ErrInvalidConfig, "the local pool resolves, and the variable is missing here")

	refused := strings.Replace(baseConfig, "${env:DB_URL}", "${env:SLUICE_TOKEN}", 1)
	r = req(operator, refused)
	r.Pool = "remote"
	_, err = h.svc.Submit(context.Background(), r)
	require.ErrorIs(t, err, execute.ErrDirectiveRefused, "refusals apply whoever serves the pool")
}

func TestSubmitPoolFromDirective(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withConfig(func(c *runs.Config) { c.Pools = []string{"default", "gpu"} }))
	text := strings.Replace(baseConfig, "name: orders\n", "name: orders\npool: \"${param.region}\"\n", 1)
	r := req(operator, text)
	r.Params = map[string]string{"region": "gpu"}
	res := h.submit(t, r)
	rec, err := h.store.Get(context.Background(), res.RunID)
	require.NoError(t, err)
	require.Equal(t, "gpu", rec.Pool)

	// A pool read from the environment is only known once resolved.
	text = strings.Replace(baseConfig, "name: orders\n", "name: orders\npool: \"${env:RUN_POOL}\"\n", 1)
	res = h.submit(t, req(operator, text))
	rec, err = h.store.Get(context.Background(), res.RunID)
	require.NoError(t, err)
	require.Equal(t, "gpu", rec.Pool)
	require.Contains(t, rec.Config, "${env:RUN_POOL}")
}

func TestSubmitIDsAreTimeOrderedUUIDv7(t *testing.T) {
	t.Parallel()
	h := newHarness(t, withConfig(func(c *runs.Config) { c.MaxQueued = 0 }))
	var ids []string
	for range 50 {
		ids = append(ids, h.submit(t, req(operator, baseConfig)).RunID)
	}
	for i, id := range ids {
		require.Regexp(t, `^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`, id)
		if i > 0 {
			require.Greater(t, id, ids[i-1], "ids increase in creation order")
		}
	}
}

func TestSubmitStoreErrorPassesThrough(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	boom := errors.New("history unavailable")
	h.store.mu.Lock()
	h.store.createErr = boom
	h.store.mu.Unlock()
	_, err := h.svc.Submit(context.Background(), req(operator, baseConfig))
	require.ErrorIs(t, err, boom)
	require.Zero(t, h.waker.count())
}

func TestSubmitAndItsAuditEntryCommitTogether(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	r := req(operator, baseConfig)
	r.IdempotencyKey = "k1"
	first := h.submit(t, r)
	entries, err := h.store.ListAudit(context.Background(), 0, 10)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.Equal(t, runs.ActionSubmitted, entries[0].Action)
	require.Equal(t, first.RunID, entries[0].RunID)
	require.Equal(t, "pending", entries[0].Details["status"], "the store records the status it stored")

	t.Cleanup(h.store.failAudits())
	replay := h.submit(t, r)
	require.True(t, replay.Replayed, "a replay changes nothing, so a failed audit write is only logged")

	_, err = h.svc.Submit(context.Background(), req(operator, baseConfig))
	require.ErrorContains(t, err, "disk full", "a new run is not stored without its audit entry")
	list, err := h.store.List(context.Background(), runs.Filter{})
	require.NoError(t, err)
	require.Len(t, list, 1, "only the first run exists")
}

func TestErrorsListsEverySentinel(t *testing.T) {
	t.Parallel()
	errs := runs.Errors()
	require.ElementsMatch(t, []error{
		runs.ErrDraining, runs.ErrQueueFull, runs.ErrQueryTimeout, runs.ErrIdempotencyConflict, runs.ErrRunDeleted,
		runs.ErrRunNotTerminal, runs.ErrForbidden, runs.ErrInvalidRequest, runs.ErrCallbackRefused,
		runs.ErrStateFormatRefused, runs.ErrPoolsUnsupported, runs.ErrVaultKeyRequired, runs.ErrSecretParamsRefused,
	}, errs)
	errs[0] = nil
	require.NotNil(t, runs.Errors()[0], "Errors returns a copy")
}
