package cluster_test

import (
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/member"
	"github.com/sluicehq/sluice/tests/historytest"
)

var errDown = errors.New("connection refused")

// heldLease is the lease the history grants the member under test, whatever TTL it asks
// for. The member keeps its short TTL for its own timing (renew ticks, outage cutoff on
// the fake clock), but a lease of the real store expires by the wall clock: on a loaded
// machine a starved lease loop, or an outage a test stages, would otherwise lose a run
// the test means to keep. A test that wants a lease to end takes it (steal) instead.
const heldLease = time.Hour

// history is the real history — historytest's migrated SQLite store, the one the store
// contract suite runs — with the seams these tests need and nothing re-implemented:
// faults to inject (an outage, statements that hang, a claim held while a peer acts) and
// a record of what the member asked of it. Every answer comes from the store.
type history struct {
	*store.Store
	t *testing.T

	// down fails every call of the member with errDown: the link to the history is cut.
	down atomic.Bool
	// stall, while set, holds Renew and Heartbeat until the channel is closed, whatever
	// their context says: a history that swallows statements.
	stall   atomic.Pointer[chan struct{}]
	stalled *steps // statements held by stall
	// writes steps after every call of the member that the history answered, so a test
	// waits for a state to appear on events, not on a poll.
	writes *steps
	// gate is held by a peer acting on the history (peer): the member's claims,
	// renewals and reclaims wait, so a peer that shortens a lease to take it (steal) is
	// the one that reclaims it.
	gate sync.RWMutex

	claimAttempts atomic.Int64 // every Claim call, answered or not
	handBackCalls atomic.Int64
	finishCalls   atomic.Int64

	mu          sync.Mutex
	claimCalls  []int
	shardClaims int
	finishes    map[string]cluster.Outcome  // the outcome of each run Finish ended
	handBacks   map[string]cluster.Progress // the counters of each run HandBack returned
	progress    map[string][]cluster.Progress
	logWrites   []string // the runs AppendLogs wrote for
	heartbeats  []cluster.MemberRow
	retries     map[int64]outboxRetry // the first retry the member asked for, by callback row
	purges      []runs.PurgeRequest
	renewCalls  int
	reclaims    int
	poolCalls   []time.Duration // ttl, wait of each FailUnservedPools
	orphanCalls []string
	stopped     []string
	created     int
	// burst, when set, is how many finishes return together (finishInBursts); waiting
	// is how many wait on burstDone.
	burst, waiting int
	burstDone      chan struct{}
}

func newHistory(t *testing.T) *history {
	t.Helper()
	return &history{Store: historytest.Open(t), t: t, stalled: newSteps(), writes: newSteps(),
		finishes: map[string]cluster.Outcome{}, retries: map[int64]outboxRetry{}, handBacks: map[string]cluster.Progress{}, progress: map[string][]cluster.Progress{}}
}

// The decorator is both ports the member uses.
var (
	_ cluster.Store        = (*history)(nil)
	_ cluster.ShardStore   = (*history)(nil)
	_ cluster.PoolTimeouts = (*history)(nil)
	_ cluster.OutboxStore  = (*history)(nil)
	_ cluster.Roster       = (*history)(nil)
)

// patient drops the deadline of a call's context but keeps its cancellation. The member
// gives each statement TTL/6 (50 ms with these tests' TTL), and on a loaded machine under
// -race a real SQLite statement can take longer, which the member would rightly take for
// an outage. These tests stage outages with down and stall; a slow statement is none.
func patient(ctx context.Context) (context.Context, context.CancelFunc) {
	out, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			cancel()
		}
	})
	return out, func() { stop(); cancel() }
}

// via says how a call of the member goes through: stalls (held by stall), gated (waits
// while a peer acts), note (records the call, under mu).
type via struct {
	stalls, gated bool
	note          func()
}

// through makes one call of the member on the history: without its deadline (patient),
// failed by down, held by stall or the gate as v says, and stepping writes when the
// history answered.
func through[T any](h *history, ctx context.Context, v via, f func(context.Context) (T, error)) (T, error) {
	ctx, done := patient(ctx)
	defer done()
	var zero T
	if ch := h.stall.Load(); v.stalls && ch != nil {
		h.stalled.add()
		<-*ch
	}
	if h.down.Load() {
		return zero, errDown
	}
	if v.gated {
		h.gate.RLock()
		defer h.gate.RUnlock()
	}
	if v.note != nil {
		h.mu.Lock()
		v.note()
		h.mu.Unlock()
	}
	got, err := f(ctx)
	if err == nil {
		h.writes.add()
	}
	return got, err
}

// throughErr is through for a call that answers only an error.
func throughErr(h *history, ctx context.Context, v via, f func(context.Context) error) error {
	_, err := through(h, ctx, v, func(ctx context.Context) (struct{}, error) { return struct{}{}, f(ctx) })
	return err
}

// record runs f under mu.
func (h *history) record(f func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f()
}

func (h *history) Claim(ctx context.Context, owner cluster.Owner, pools []string, n int, _ time.Duration) ([]cluster.Claimed, error) {
	h.claimAttempts.Add(1)
	return through(h, ctx, via{gated: true, note: func() { h.claimCalls = append(h.claimCalls, n) }},
		func(ctx context.Context) ([]cluster.Claimed, error) {
			return h.Store.Claim(ctx, owner, pools, n, heldLease)
		})
}

func (h *history) Renew(ctx context.Context, owner string, held []cluster.Ref, _ time.Duration) ([]cluster.Ref, error) {
	return through(h, ctx, via{stalls: true, gated: true, note: func() { h.renewCalls++ }},
		func(ctx context.Context) ([]cluster.Ref, error) { return h.Store.Renew(ctx, owner, held, heldLease) })
}

func (h *history) Progress(ctx context.Context, owner string, ref cluster.Ref, p cluster.Progress) error {
	return throughErr(h, ctx, via{}, func(ctx context.Context) error {
		err := h.Store.Progress(ctx, owner, ref, p)
		if err == nil {
			h.record(func() { h.progress[ref.ID] = append(h.progress[ref.ID], p) })
		}
		return err
	})
}

func (h *history) Finish(ctx context.Context, owner string, ref cluster.Ref, o cluster.Outcome, b runs.CallbackBuilder) error {
	h.finishCalls.Add(1)
	return throughErr(h, ctx, via{}, func(ctx context.Context) error {
		err := h.Store.Finish(ctx, owner, ref, o, b)
		if err == nil {
			h.record(func() { h.finishes[ref.ID] = o })
			h.awaitBurst()
		}
		return err
	})
}

// finishInBursts holds each Finish that ended its run until n have; then the n return
// together and free their slots at once, whatever the history's latency.
func (h *history) finishInBursts(n int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.burst, h.burstDone = n, make(chan struct{})
}

func (h *history) awaitBurst() {
	h.mu.Lock()
	if h.burst == 0 {
		h.mu.Unlock()
		return
	}
	h.waiting++
	done := h.burstDone
	if h.waiting == h.burst {
		close(done)
		h.waiting, h.burstDone = 0, make(chan struct{})
	}
	h.mu.Unlock()
	<-done
}

func (h *history) HandBack(ctx context.Context, owner string, ref cluster.Ref, p cluster.Progress) error {
	h.handBackCalls.Add(1)
	return throughErr(h, ctx, via{}, func(ctx context.Context) error {
		err := h.Store.HandBack(ctx, owner, ref, p)
		if err == nil {
			h.record(func() { h.handBacks[ref.ID] = p })
		}
		return err
	})
}

func (h *history) Reclaim(ctx context.Context, b runs.CallbackBuilder) ([]cluster.Reclaimed, error) {
	return through(h, ctx, via{gated: true, note: func() { h.reclaims++ }},
		func(ctx context.Context) ([]cluster.Reclaimed, error) { return h.Store.Reclaim(ctx, b) })
}

func (h *history) ReclaimShards(ctx context.Context, b runs.CallbackBuilder) (cluster.ShardReclaim, error) {
	return through(h, ctx, via{gated: true}, func(ctx context.Context) (cluster.ShardReclaim, error) {
		return h.Store.ReclaimShards(ctx, b)
	})
}

func (h *history) NextExpiry(ctx context.Context) (time.Duration, bool, error) {
	var ok bool
	left, err := through(h, ctx, via{}, func(ctx context.Context) (left time.Duration, err error) {
		left, ok, err = h.Store.NextExpiry(ctx)
		return left, err
	})
	return left, ok, err
}

func (h *history) ReclaimOrphans(ctx context.Context, self string, b runs.CallbackBuilder) ([]cluster.Reclaimed, error) {
	return through(h, ctx, via{note: func() { h.orphanCalls = append(h.orphanCalls, self) }},
		func(ctx context.Context) ([]cluster.Reclaimed, error) { return h.Store.ReclaimOrphans(ctx, self, b) })
}

func (h *history) CancelRequested(ctx context.Context, ids []string) ([]string, error) {
	return through(h, ctx, via{}, func(ctx context.Context) ([]string, error) { return h.Store.CancelRequested(ctx, ids) })
}

func (h *history) AppendLogs(ctx context.Context, id string, lines []cluster.LogLine) error {
	return throughErr(h, ctx, via{note: func() { h.logWrites = append(h.logWrites, id) }},
		func(ctx context.Context) error { return h.Store.AppendLogs(ctx, id, lines) })
}

func (h *history) Heartbeat(ctx context.Context, row cluster.MemberRow) error {
	return throughErr(h, ctx, via{stalls: true, note: func() { h.heartbeats = append(h.heartbeats, row) }},
		func(ctx context.Context) error { return h.Store.Heartbeat(ctx, row) })
}

func (h *history) ClaimOutbox(ctx context.Context, owner string, n int, lease time.Duration) ([]cluster.OutboxItem, error) {
	return through(h, ctx, via{}, func(ctx context.Context) ([]cluster.OutboxItem, error) {
		return h.Store.ClaimOutbox(ctx, owner, n, lease)
	})
}

func (h *history) OutboxDelivered(ctx context.Context, id int64) error {
	return throughErr(h, ctx, via{}, func(ctx context.Context) error { return h.Store.OutboxDelivered(ctx, id) })
}

func (h *history) OutboxRetry(ctx context.Context, id int64, next time.Time, lastErr string) error {
	return throughErr(h, ctx, via{note: func() {
		if _, ok := h.retries[id]; !ok {
			h.retries[id] = outboxRetry{next: next, lastErr: lastErr}
		}
	}}, func(ctx context.Context) error { return h.Store.OutboxRetry(ctx, id, next, lastErr) })
}

// Roster answers the membership view (cluster.Roster): the heartbeats and the history's clock.
func (h *history) Roster(ctx context.Context) ([]member.Member, time.Time, error) {
	type roster struct {
		members []member.Member
		now     time.Time
	}
	got, err := through(h, ctx, via{}, func(ctx context.Context) (roster, error) {
		ms, now, err := h.Store.Roster(ctx)
		return roster{ms, now}, err
	})
	return got.members, got.now, err
}

// Purge records each purge the member asked for and runs it on the history.
func (h *history) Purge(ctx context.Context, req runs.PurgeRequest) (runs.PurgeResult, error) {
	return through(h, ctx, via{note: func() { h.purges = append(h.purges, req) }},
		func(ctx context.Context) (runs.PurgeResult, error) { return h.Store.Purge(ctx, req) })
}

// outboxRetry is a failed delivery as the member recorded it: when to try again, and why.
type outboxRetry struct {
	next    time.Time
	lastErr string
}

// MarkStopped is recorded even while down: a stop is the member's last word.
func (h *history) MarkStopped(ctx context.Context, id string) error {
	err := h.Store.MarkStopped(ctx, id)
	if err == nil {
		h.record(func() { h.stopped = append(h.stopped, id) })
	}
	return err
}

func (h *history) ClaimShards(ctx context.Context, owner cluster.Owner, pools []string, n int, _ time.Duration) ([]cluster.ClaimedShard, error) {
	return through(h, ctx, via{gated: true, note: func() { h.shardClaims++ }},
		func(ctx context.Context) ([]cluster.ClaimedShard, error) {
			return h.Store.ClaimShards(ctx, owner, pools, n, heldLease)
		})
}

func (h *history) RenewShards(ctx context.Context, owner string, held []cluster.ShardRef, _ time.Duration) ([]cluster.ShardRef, error) {
	return through(h, ctx, via{stalls: true, gated: true}, func(ctx context.Context) ([]cluster.ShardRef, error) {
		return h.Store.RenewShards(ctx, owner, held, heldLease)
	})
}

func (h *history) PlanShards(ctx context.Context, owner string, ref cluster.Ref, plan []execute.ShardSlice) error {
	return throughErr(h, ctx, via{}, func(ctx context.Context) error { return h.Store.PlanShards(ctx, owner, ref, plan) })
}

func (h *history) FinishShard(ctx context.Context, owner string, ref cluster.ShardRef, o cluster.Outcome, b runs.CallbackBuilder) (string, error) {
	return through(h, ctx, via{}, func(ctx context.Context) (string, error) { return h.Store.FinishShard(ctx, owner, ref, o, b) })
}

func (h *history) HandBackShard(ctx context.Context, owner string, ref cluster.ShardRef, p cluster.Progress, b runs.CallbackBuilder) (string, error) {
	return through(h, ctx, via{}, func(ctx context.Context) (string, error) {
		return h.Store.HandBackShard(ctx, owner, ref, p, b)
	})
}

func (h *history) ReclaimOrphanShards(ctx context.Context, self string, b runs.CallbackBuilder) (cluster.ShardReclaim, error) {
	return through(h, ctx, via{}, func(ctx context.Context) (cluster.ShardReclaim, error) {
		return h.Store.ReclaimOrphanShards(ctx, self, b)
	})
}

func (h *history) FailUnservedPools(ctx context.Context, ttl, wait time.Duration, b runs.CallbackBuilder) ([]cluster.PoolTimedOut, error) {
	return through(h, ctx, via{note: func() { h.poolCalls = append(h.poolCalls, ttl, wait) }},
		func(ctx context.Context) ([]cluster.PoolTimedOut, error) {
			return h.Store.FailUnservedPools(ctx, ttl, wait, b)
		})
}

// poolCallCount is how many times the member asked to fail unserved pools.
func (h *history) poolCallCount() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.poolCalls) / 2
}

// until waits for cond, re-checking after each call of the member the history answered.
// The deadline only ends a test whose member stopped writing; it measures no speed.
func (h *history) until(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	deadline := time.NewTimer(stepDeadline)
	defer deadline.Stop()
	for {
		h.writes.mu.Lock()
		ch := h.writes.changed
		h.writes.mu.Unlock()
		if cond() {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("%s: not so after %s", msg, stepDeadline)
		}
	}
}

// get reads run id from the history.
func (h *history) get(id string) *runs.Record {
	h.t.Helper()
	rec, err := h.Get(context.Background(), id)
	require.NoError(h.t, err)
	return rec
}

// ended waits until run id is terminal and returns it.
func (h *history) ended(t *testing.T, id string) *runs.Record {
	t.Helper()
	var rec *runs.Record
	h.until(t, func() bool { rec = h.get(id); return terminal(rec.Status) }, "run "+id+" ended")
	return rec
}

// outcome is the Outcome the member's Finish ended run id with, if it did.
func (h *history) outcome(id string) (cluster.Outcome, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	o, ok := h.finishes[id]
	return o, ok
}

// handBack is the counters the member's HandBack returned run id with, if it did.
func (h *history) handBack(id string) (cluster.Progress, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	p, ok := h.handBacks[id]
	return p, ok
}

// handedBack reports whether the member handed run id back.
func (h *history) handedBack(id string) bool {
	_, ok := h.handBack(id)
	return ok
}

// logs are the persisted log lines of run id.
func (h *history) logs(id string) []runs.LogLine {
	h.t.Helper()
	got, err := h.Logs(context.Background(), id, 0, 1000)
	require.NoError(h.t, err)
	return got
}

// count is how many runs have status.
func (h *history) count(status string) int {
	h.t.Helper()
	got, err := h.CountByStatus(context.Background())
	require.NoError(h.t, err)
	return got[status]
}

func terminal(status string) bool {
	return slices.Contains([]string{"completed", "failed", "cancelled"}, status)
}

// claims are the sizes the member asked its claims for, in order.
func (h *history) claims() []int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.claimCalls)
}
