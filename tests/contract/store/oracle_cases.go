package storecontract

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// The oracle (ARCHITECTURE, "the domain is the one source of truth"): the hot lifecycle
// paths are hand-written SQL, so for every (status × cancel flag × attempt) a run can be
// in and every event, the store's result must equal what the domain verb decides on the
// same state — status, attempt, cancel flag and owner. Fenced events (finish, retry, hand
// back, renew) are sent by the run's owner at its epoch under a live lease, so the fence
// passes exactly when the run is running; on any other run the store must answer
// run.ErrLeaseLost (or skip it) and change nothing, and the verb must refuse too.

// oracleState is one starting point of the lifecycle.
type oracleState struct {
	status  run.Status
	cancel  bool
	attempt int
}

func (s oracleState) String() string {
	return fmt.Sprintf("%s/cancel=%t/attempt=%d", s.status, s.cancel, s.attempt)
}

// oracleStates is every stored status × cancel flag × attempt (one left, none left).
func oracleStates() []oracleState {
	var out []oracleState
	for _, st := range run.Statuses() {
		for _, c := range []bool{false, true} {
			for _, a := range []int{1, oracleMaxAttempts} {
				out = append(out, oracleState{st, c, a})
			}
		}
	}
	return out
}

const oracleMaxAttempts = 3

var oraclePolicy = run.Retry{MaxAttempts: oracleMaxAttempts, On: run.RetryAny, Backoff: retryPolicy.Backoff}

// oracleRun is one run of the case: the domain's copy and the stored one.
type oracleRun struct {
	state   oracleState
	id      string
	pool    string
	domain  *run.Run
	sibling cluster.Claimed
}

// place stores a run in state s (in a pool of its own, so claims reach it alone) and
// rehydrates the domain's copy of the same state. A running run is owned by e.owner at
// epoch 1 with a lease that expires in an hour (or expired an hour ago).
func (e *env) place(t *testing.T, i int, s oracleState, expired bool) *oracleRun {
	t.Helper()
	pool := fmt.Sprintf("p%d", i)
	// A name of its own: the run is alone in its pipeline key, so a promotion reaches it.
	r := e.create(t, rec(fmt.Sprintf("oracle-%d", i), inPool(pool), withRetry,
		func(r *runs.Record) { r.MaxAttempts = oracleMaxAttempts }))
	owned := s.status == run.Running
	now := time.Now().UTC().Truncate(time.Millisecond)
	attempts := make([]run.Attempt, s.attempt)
	raw := make([]map[string]any, s.attempt)
	for n := range attempts {
		a := run.Attempt{N: n + 1, InstanceID: e.owner.InstanceID, ClaimedAt: now}
		j := map[string]any{"n": n + 1, "instance_id": e.owner.InstanceID, "claimed_at": now.UnixMilli()}
		last := n == s.attempt-1
		if !last || !(owned || s.status == run.Sharded) {
			a.EndedAt, a.Outcome = now, run.OutcomeLost
			j["ended_at"], j["outcome"] = now.UnixMilli(), string(run.OutcomeLost)
		}
		attempts[n], raw[n] = a, j
	}
	text, err := json.Marshal(raw)
	require.NoError(t, err)
	var owner any
	lease := any(nil)
	if owned {
		owner = e.owner.InstanceID
		d := time.Hour
		if expired {
			d = -time.Hour
		}
		lease = now.Add(d).UnixMilli()
	}
	var finished any
	if s.status.Terminal() {
		finished = now.UnixMilli()
	}
	_, err = e.s.DB().NewRaw(`UPDATE sluice_runs SET status = ?, cancel_requested = ?, attempt = ?, owner = ?,
  lease_epoch = 1, lease_expires_at = ?, attempts = ?, finished_at = ?, claimed_at = ?, started_at = ?
WHERE id = ?`, string(s.status), s.cancel, s.attempt, owner, lease, string(text), finished,
		now.UnixMilli(), now.UnixMilli(), r.ID).Exec(e.ctx)
	require.NoError(t, err)
	snap := run.Snapshot{ID: r.ID, Name: r.Name, Pool: pool, TriggerKind: run.TriggerAPI, Status: s.status,
		Attempt: s.attempt, MaxAttempts: oracleMaxAttempts, CancelRequested: s.cancel, CreatedAt: r.CreatedAt,
		Attempts: attempts, Retry: &oraclePolicy}
	if owned {
		snap.Owner = e.owner.InstanceID
	}
	return &oracleRun{state: s, id: r.ID, pool: pool, domain: run.Rehydrate(snap)}
}

func (o *oracleRun) ref() cluster.Ref { return cluster.Ref{ID: o.id, Epoch: 1} }

// oracleEvent is one event: what the store is asked (its error, if any, is returned) and
// what the domain verb does to its copy. A refused verb must leave the stored run as it
// was.
type oracleEvent struct {
	name    string
	expired bool // the running runs' leases expired before the event
	store   func(t *testing.T, e *env, o *oracleRun) error
	domain  func(o *oracleRun, at time.Time) error
	// sibling: the store event is the end of another run of the same pipeline key,
	// claimed for it (sibling holds its claim), which promotes the key's queued run.
	sibling bool
}

// fenced is the domain side of an event the store fences on (owner, epoch, live lease):
// only the owner's running run passes; the verb decides the rest.
func fenced(verb func(r *run.Run, at time.Time) error) func(o *oracleRun, at time.Time) error {
	return func(o *oracleRun, at time.Time) error {
		if o.domain.Status() != run.Running {
			return fmt.Errorf("not owned: %w", run.ErrLeaseLost)
		}
		return verb(o.domain, at)
	}
}

var oracleFailure = run.Failure{Error: &run.Error{Code: run.CodePipelineError, Message: "boom"}, Transient: true}

func runOracleEvents() []oracleEvent {
	finish := func(st run.Status, e *run.Error) oracleEvent {
		o := cluster.Outcome{Status: string(st)}
		if e != nil {
			o.ErrorCode, o.ErrorMessage = string(e.Code), e.Message
		}
		return oracleEvent{
			name: "finish " + string(st),
			store: func(t *testing.T, e *env, r *oracleRun) error {
				return e.s.Finish(e.ctx, e.owner.InstanceID, r.ref(), o, (&builder{ok: true}).build)
			},
			domain: fenced(func(r *run.Run, at time.Time) error { return r.Finish(st, e, at) }),
		}
	}
	return []oracleEvent{
		{
			name: "claim",
			store: func(t *testing.T, e *env, r *oracleRun) error {
				got, err := e.s.Claim(e.ctx, e.owner, []string{r.pool}, 1, longTTL)
				if err == nil && len(got) == 0 {
					return errors.New("nothing claimed")
				}
				return err
			},
			domain: func(o *oracleRun, at time.Time) error { return o.domain.Claim("member-a", at) },
		},
		finish(run.Completed, nil),
		finish(run.Failed, oracleFailure.Error),
		finish(run.Cancelled, nil),
		{
			// The member decides with what its claim knew (no cancel flag); the store
			// applies that decision, and the verb on the true state is the oracle.
			name: "retry",
			store: func(t *testing.T, e *env, r *oracleRun) error {
				blind := run.Rehydrate(func() run.Snapshot { s := r.domain.Snapshot(); s.CancelRequested = false; return s }())
				d, err := blind.Fail(oracleFailure, time.Now(), 0)
				if err != nil {
					d = run.Decision{}
				}
				o := cluster.Outcome{Status: string(run.Failed), ErrorCode: string(run.CodePipelineError), ErrorMessage: "boom",
					Retry: d.Retry, RetryDelay: 0}
				return e.s.Finish(e.ctx, e.owner.InstanceID, r.ref(), o, (&builder{ok: true}).build)
			},
			domain: fenced(func(r *run.Run, at time.Time) error { _, err := r.Fail(oracleFailure, at, 0); return err }),
		},
		{
			name: "hand back",
			store: func(t *testing.T, e *env, r *oracleRun) error {
				return e.s.HandBack(e.ctx, e.owner.InstanceID, r.ref(), cluster.Progress{})
			},
			domain: fenced(func(r *run.Run, at time.Time) error { return r.HandBack(at) }),
		},
		{
			name: "renew",
			store: func(t *testing.T, e *env, r *oracleRun) error {
				got, err := e.s.Renew(e.ctx, e.owner.InstanceID, []cluster.Ref{r.ref()}, longTTL)
				if err == nil && len(got) == 0 {
					return fmt.Errorf("not renewed: %w", run.ErrLeaseLost)
				}
				return err
			},
			domain: fenced(func(*run.Run, time.Time) error { return nil }), // a lease event: the run stays as it is
		},
		{
			name:    "requeue",
			expired: true,
			store: func(t *testing.T, e *env, r *oracleRun) error {
				got, err := e.s.Reclaim(e.ctx, (&builder{ok: true}).build)
				if err == nil && len(got) == 0 {
					return errors.New("nothing reclaimed")
				}
				return err
			},
			// A reclaim pass also promotes a queued run that no active run of its key
			// holds back (the backstop of the promotion a terminal transition makes):
			// each run here is alone in its key.
			domain: func(o *oracleRun, at time.Time) error {
				if o.domain.Status() == run.Queued {
					return o.domain.Promote()
				}
				return o.domain.Requeue(at)
			},
		},
		{
			name:    "promote",
			sibling: true,
			store: func(t *testing.T, e *env, r *oracleRun) error {
				return e.s.Finish(e.ctx, e.owner.InstanceID, cluster.Ref{ID: r.sibling.ID, Epoch: r.sibling.Epoch},
					cluster.Outcome{Status: string(run.Completed)}, (&builder{ok: true}).build)
			},
			domain: func(o *oracleRun, _ time.Time) error { return o.domain.Promote() },
		},
		{
			// The cancel of the runs service: a queued or pending run is cancelled at
			// once, a running or sharded one is flagged for its owner.
			name: "cancel",
			store: func(t *testing.T, e *env, r *oracleRun) error {
				_, ok, err := e.s.CancelQueued(e.ctx, r.id, (&builder{ok: true}).build)
				if err != nil || ok {
					return err
				}
				_, err = e.s.RequestCancel(e.ctx, r.id)
				return err
			},
			domain: func(o *oracleRun, at time.Time) error {
				if st := o.domain.Status(); st == run.Queued || st == run.Pending {
					return o.domain.Cancel(at)
				}
				return o.domain.RequestCancel()
			},
		},
	}
}

func oracleCases() map[string]func(*testing.T, *env) {
	out := map[string]func(*testing.T, *env){}
	for _, ev := range runOracleEvents() {
		out["runs: "+ev.name] = func(t *testing.T, e *env) {
			states := oracleStates()
			placed := make([]*oracleRun, len(states))
			for i, s := range states {
				placed[i] = e.place(t, i, s, ev.expired)
				if ev.sibling {
					placed[i].sibling = e.claimOne(t, fmt.Sprintf("oracle-%d", i), longTTL, inPool(fmt.Sprintf("y%d", i)))
				}
			}
			// Requeue reclaims every expired lease in one call: run it once, then judge each.
			var reclaimErr error
			if ev.name == "requeue" {
				reclaimErr = ev.store(t, e, placed[0])
				require.NoError(t, ignoreRefusal(reclaimErr))
			}
			var diffs []string
			for _, o := range placed {
				before := o.domain.Snapshot()
				var serr error
				if ev.name != "requeue" {
					serr = ev.store(t, e, o) // first: the retry event reads the state before the verb
				}
				verr := ev.domain(o, time.Now())
				require.NoError(t, ignoreRefusal(serr), "%s: the store failed", o.state)
				got := e.get(t, o.id)
				want := o.domain.Snapshot()
				if verr != nil {
					want = before // a refused verb changes nothing
				}
				if d := oracleDiff(want, got); d != "" {
					diffs = append(diffs, fmt.Sprintf("%s: verb err=%v store err=%v: %s", o.state, verr, serr, d))
				}
			}
			require.Empty(t, diffs, "the store and the domain disagree on %q:\n%s", ev.name, strings.Join(diffs, "\n"))
		}
	}
	addShardOracleCases(out)
	return out
}

// ignoreRefusal keeps the errors that are not a refusal of the event (those fail the case).
func ignoreRefusal(err error) error {
	if err == nil || errors.Is(err, run.ErrLeaseLost) || errors.Is(err, run.ErrConflict) ||
		errors.Is(err, run.ErrInvalidTransition) || strings.HasPrefix(err.Error(), "nothing ") {
		return nil
	}
	return err
}

func oracleDiff(want run.Snapshot, got *runs.Record) string {
	var d []string
	if string(want.Status) != got.Status {
		d = append(d, fmt.Sprintf("status %s ≠ stored %s", want.Status, got.Status))
	}
	if want.Attempt != got.Attempt {
		d = append(d, fmt.Sprintf("attempt %d ≠ stored %d", want.Attempt, got.Attempt))
	}
	if want.CancelRequested != got.CancelRequested {
		d = append(d, fmt.Sprintf("cancel_requested %t ≠ stored %t", want.CancelRequested, got.CancelRequested))
	}
	if want.Owner != got.Owner {
		d = append(d, fmt.Sprintf("owner %q ≠ stored %q", want.Owner, got.Owner))
	}
	return strings.Join(d, "; ")
}
