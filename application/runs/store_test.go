package runs_test

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/schedule"
	"github.com/sluicehq/sluice/tests/historytest"
)

// serialConfig keeps incremental state, so its runs are serial: a second one waits queued
// behind an active first.
var serialConfig = strings.Replace(baseConfig, "pipeline:\n", "replication: {type: incremental, cursor: id}\npipeline:\n", 1)

// testStore is the real history — SQLite, as the store contract suite runs it — so these
// tests check the admission, idempotency and cancel rules the server
// really applies. It adds only seams: faults to inject, an interleaving to provoke, and a
// record of the cancel flags asked for. Statuses move only through the store's own
// transitions (claim, finish, hand back, plan shards), as a member would move them.
type testStore struct {
	*store.Store
	t     *testing.T
	owner cluster.Owner

	mu      sync.Mutex
	cancels []string               // RequestCancel calls
	refs    map[string]cluster.Ref // runs this test claimed, at their epoch
	// createErr fails Create and CreateTick; claimBeforeCancel has a member claim the
	// run between the service's read and its CancelQueued, as a real race would.
	createErr         error
	claimBeforeCancel bool
	// cancelled runs once after the next RequestCancel, before it returns.
	cancelled func()
}

func newTestStore(t *testing.T) *testStore {
	t.Helper()
	ts := &testStore{t: t, owner: cluster.Owner{InstanceID: "test-member"}, refs: map[string]cluster.Ref{}}
	s := historytest.Open(t)
	ts.Store = s
	return ts
}

// failAudits makes the history refuse every new audit entry (a trigger aborts the
// insert, inside whatever transaction makes it) until the test ends or calls the
// returned function.
func (s *testStore) failAudits() func() {
	s.t.Helper()
	ctx := context.Background()
	_, err := s.DB().ExecContext(ctx, `CREATE TRIGGER test_fail_audit BEFORE INSERT ON sluice_audit
BEGIN SELECT RAISE(ABORT, 'disk full'); END`)
	require.NoError(s.t, err)
	return func() {
		_, err := s.DB().ExecContext(ctx, "DROP TRIGGER IF EXISTS test_fail_audit")
		require.NoError(s.t, err)
	}
}

// secrets are the sealed secret values the history keeps for run id.
func (s *testStore) secrets(id string) [][]byte {
	s.t.Helper()
	got, err := s.SealedSecrets(context.Background(), id)
	require.NoError(s.t, err)
	return got
}

// schedule stores a schedule (and its template) whose ticks a test creates.
func (s *testStore) schedule(id string) {
	s.t.Helper()
	ctx := context.Background()
	now := time.Now().UTC()
	require.NoError(s.t, s.AddTemplate(ctx, &templates.Template{ID: "tpl-" + id, Config: "version: 1\n", CreatedBy: "admin", CreatedAt: now}))
	require.NoError(s.t, s.AddSchedule(ctx, &scheduling.Schedule{ID: id, TemplateID: "tpl-" + id, Cron: "*/5 * * * *",
		Timezone: "Europe/Berlin", MaxCatchupRuns: 1, Overlap: schedule.OverlapSkip, Params: `{}`,
		CreatedBy: "admin", CreatedAt: now, UpdatedAt: now}))
}

func (s *testStore) Create(ctx context.Context, rec *runs.Record, idem *runs.Idempotency) (runs.CreateResult, error) {
	if err := s.injected(); err != nil {
		return runs.CreateResult{}, err
	}
	return s.Store.Create(ctx, rec, idem)
}

func (s *testStore) CreateTick(ctx context.Context, rec *runs.Record, tick runs.Tick) (runs.CreateResult, error) {
	if err := s.injected(); err != nil {
		return runs.CreateResult{}, err
	}
	return s.Store.CreateTick(ctx, rec, tick)
}

func (s *testStore) injected() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.createErr
}

func (s *testStore) RequestCancel(ctx context.Context, id string) (bool, error) {
	s.mu.Lock()
	s.cancels = append(s.cancels, id)
	after := s.cancelled
	s.cancelled = nil
	s.mu.Unlock()
	ended, err := s.Store.RequestCancel(ctx, id)
	if after != nil {
		after()
	}
	return ended, err
}

// afterCancel runs f once right after the next RequestCancel.
func (s *testStore) afterCancel(f func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cancelled = f
}

// claimShard has this test's member claim one pending shard of the sharded run id.
func (s *testStore) claimShard(id string) cluster.ShardRef {
	s.t.Helper()
	got, err := s.ClaimShards(context.Background(), s.owner, []string{s.get(id).Pool}, 1, time.Hour)
	require.NoError(s.t, err)
	require.Len(s.t, got, 1)
	require.Equal(s.t, id, got[0].Ref.RunID)
	return got[0].Ref
}

// finishShard ends an owned shard with st.
func (s *testStore) finishShard(ref cluster.ShardRef, st run.Status) {
	s.t.Helper()
	_, err := s.FinishShard(context.Background(), s.owner.InstanceID, ref, cluster.Outcome{Status: string(st)}, nil)
	require.NoError(s.t, err)
}

func (s *testStore) CancelQueued(ctx context.Context, id string, build runs.CallbackBuilder) (*runs.Record, bool, error) {
	s.mu.Lock()
	race := s.claimBeforeCancel
	s.mu.Unlock()
	if race {
		s.claim(id)
	}
	return s.Store.CancelQueued(ctx, id, build)
}

func (s *testStore) cancelCalls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.cancels)
}

func (s *testStore) get(id string) *runs.Record {
	s.t.Helper()
	rec, err := s.Get(context.Background(), id)
	require.NoError(s.t, err)
	return rec
}

// claim has this test's member claim the pending run id, and hands back any other run
// of its pool the same claim took.
func (s *testStore) claim(id string) cluster.Ref {
	s.t.Helper()
	ctx := context.Background()
	rec := s.get(id)
	require.Equal(s.t, string(run.Pending), rec.Status, "only a pending run can be claimed")
	got, err := s.Claim(ctx, s.owner, []string{rec.Pool}, 1000, time.Hour)
	require.NoError(s.t, err)
	var mine cluster.Ref
	for _, c := range got {
		ref := cluster.Ref{ID: c.ID, Epoch: c.Epoch}
		if c.ID == id {
			mine = ref
			continue
		}
		require.NoError(s.t, s.HandBack(ctx, s.owner.InstanceID, ref, cluster.Progress{}))
	}
	require.Equal(s.t, id, mine.ID, "the claim did not take run %s", id)
	s.mu.Lock()
	s.refs[id] = mine
	s.mu.Unlock()
	return mine
}

// setStatus moves a run to st through the store's transitions: pending → running by a
// claim, running → pending by a hand-back, → sharded by planning two shards, → an end
// status by a finish. A queued run comes only from admission (see queuedRun).
func (s *testStore) setStatus(id string, st run.Status) {
	s.t.Helper()
	ctx := context.Background()
	cur := run.Status(s.get(id).Status)
	if cur == st {
		return
	}
	switch st {
	case run.Pending:
		require.Equal(s.t, run.Running, cur, "only a running run goes back to pending")
		require.NoError(s.t, s.HandBack(ctx, s.owner.InstanceID, s.ref(id), cluster.Progress{}))
	case run.Running:
		s.claim(id)
	case run.Sharded:
		s.planShards(id, 2)
	case run.Completed, run.Failed, run.Cancelled:
		ref := s.running(id)
		o := cluster.Outcome{Status: string(st)}
		if st == run.Failed {
			o.ErrorCode, o.ErrorMessage = string(run.CodePipelineError), "the sink refused a row"
		}
		require.NoError(s.t, s.Finish(ctx, s.owner.InstanceID, ref, o, nil))
	default:
		s.t.Fatalf("setStatus: a run reaches %s only through admission", st)
	}
	require.Equal(s.t, string(st), s.get(id).Status)
}

// planShards splits the run id into n pending shards, as its coordinator would.
func (s *testStore) planShards(id string, n int) {
	s.t.Helper()
	plan := make([]execute.ShardSlice, n)
	for i := range plan {
		plan[i] = execute.ShardSlice{Index: i, Count: n}
	}
	require.NoError(s.t, s.PlanShards(context.Background(), s.owner.InstanceID, s.running(id), plan))
}

// running returns the ref of id, claiming it first when it is still pending.
func (s *testStore) running(id string) cluster.Ref {
	s.t.Helper()
	if s.get(id).Status == string(run.Pending) {
		return s.claim(id)
	}
	return s.ref(id)
}

func (s *testStore) ref(id string) cluster.Ref {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	ref, ok := s.refs[id]
	require.True(s.t, ok, "run %s was not claimed by this test", id)
	return ref
}

// outbox returns the callback rows waiting for delivery.
func (s *testStore) outbox() []cluster.OutboxItem {
	s.t.Helper()
	items, err := s.ClaimOutbox(context.Background(), "test-sender", 1000, time.Millisecond)
	require.NoError(s.t, err)
	return items
}

func (s *testStore) auditActions() []string {
	s.t.Helper()
	var out []string
	for _, e := range s.audit() {
		out = append(out, e.Action)
	}
	return out
}

func (s *testStore) lastAudit() runs.AuditEntry {
	s.t.Helper()
	all := s.audit()
	require.NotEmpty(s.t, all, "no audit entry")
	return all[len(all)-1]
}

func (s *testStore) audit() []runs.AuditEntry {
	s.t.Helper()
	var all []runs.AuditEntry
	after := int64(0)
	for {
		page, err := s.ListAudit(context.Background(), after, 500)
		require.NoError(s.t, err)
		all = append(all, page...)
		if len(page) < 500 {
			return all
		}
		after = page[len(page)-1].Seq
	}
}

// count is how many runs the history holds.
func (s *testStore) count() int {
	s.t.Helper()
	list, err := s.List(context.Background(), runs.Filter{Limit: 500})
	require.NoError(s.t, err)
	return len(list)
}

// put stores rec as given (id, name, tenant, labels, creation time, config) and moves it
// to rec.Status through the store's transitions.
func (s *testStore) put(rec *runs.Record) {
	s.t.Helper()
	c := *rec
	c.Status = "" // stored as the store decides (pending); then moved as a member would
	if c.TriggerKind == "" {
		c.TriggerKind = string(run.TriggerAPI)
	}
	if c.Pool == "" {
		c.Pool = "default"
	}
	if c.RunDate == "" {
		c.RunDate = epoch.Format(time.DateOnly)
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = epoch
	}
	c.MaxAttempts = max(c.MaxAttempts, 3)
	_, err := s.Store.Create(context.Background(), &c, nil)
	require.NoError(s.t, err)
	if rec.Status != "" {
		s.setStatus(c.ID, run.Status(rec.Status))
	}
}

// appendLogs adds lines to a run's log through the store's log port.
func (s *testStore) appendLogs(id string, messages ...string) {
	s.t.Helper()
	lines := make([]cluster.LogLine, len(messages))
	for i, m := range messages {
		lines[i] = cluster.LogLine{At: time.Now(), Level: "INFO", Message: m}
	}
	require.NoError(s.t, s.AppendLogs(context.Background(), id, lines))
}

// term makes this test the scheduler's leader and returns its term, the epoch ticks are
// created under.
func (s *testStore) term() int64 {
	s.t.Helper()
	l, err := s.Elector(false).Campaign(context.Background(), scheduling.Candidate{InstanceID: "test-leader", TTL: time.Hour})
	require.NoError(s.t, err)
	require.NotNil(s.t, l, "no other leader exists")
	return l.Epoch()
}

// movingClock is a service clock a test moves forward.
type movingClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *movingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *movingClock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
