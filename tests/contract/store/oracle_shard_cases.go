package storecontract

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/shard"
)

// The oracle for shards: every shard status × its run's cancel flag × attempt × event,
// through the store and through shard.Shard's verb, must end in the same status, attempt
// and owner.

type oracleShard struct {
	status  shard.Status
	cancel  bool
	attempt int
	ref     cluster.ShardRef
	pool    string
	domain  *shard.Shard
}

func (o *oracleShard) String() string {
	return fmt.Sprintf("%s/run-cancel=%t/attempt=%d", o.status, o.cancel, o.attempt)
}

// placeShards stores one sharded run per cancel flag with a shard in every status ×
// attempt, each in a pool of its own, and rehydrates the domain's copies.
func (e *env) placeShards(t *testing.T, expired bool) []*oracleShard {
	t.Helper()
	var out []*oracleShard
	statuses := shard.Statuses()
	attempts := []int{1, oracleMaxAttempts}
	for _, cancel := range []bool{false, true} {
		c := e.sharded(t, "oracle", hashPlan(len(statuses)*len(attempts)), withRetry)
		_, err := e.s.DB().NewRaw(`UPDATE sluice_runs SET cancel_requested = ? WHERE id = ?`, cancel, c.ID).Exec(e.ctx)
		require.NoError(t, err)
		i := 0
		for _, st := range statuses {
			for _, a := range attempts {
				o := &oracleShard{status: st, cancel: cancel, attempt: a, pool: fmt.Sprintf("s%t%d", cancel, i),
					ref: cluster.ShardRef{RunID: c.ID, Index: i, Epoch: 1}}
				var owner, lease, finished any
				now := time.Now()
				if st == shard.Running {
					owner = e.owner.InstanceID
					d := time.Hour
					if expired {
						d = -time.Hour
					}
					lease = now.Add(d).UnixMilli()
				}
				if st.Terminal() {
					finished = now.UnixMilli()
				}
				_, err := e.s.DB().NewRaw(`UPDATE sluice_shards SET status = ?, attempt = ?, max_attempts = ?, owner = ?,
  lease_epoch = 1, lease_expires_at = ?, finished_at = ?, pool = ? WHERE run_id = ? AND shard_index = ?`,
					string(st), a, oracleMaxAttempts, owner, lease, finished, o.pool, c.ID, i).Exec(e.ctx)
				require.NoError(t, err)
				snap := shard.Snapshot{RunID: c.ID, Index: i, Pool: o.pool, Status: st, Attempt: a, MaxAttempts: oracleMaxAttempts}
				if st == shard.Running {
					snap.Owner = e.owner.InstanceID
				}
				o.domain = shard.Rehydrate(snap)
				out = append(out, o)
				i++
			}
		}
	}
	return out
}

type shardEvent struct {
	name    string
	expired bool
	once    bool // one store call serves every shard (a reclaim pass)
	store   func(e *env, o *oracleShard) error
	domain  func(o *oracleShard, at time.Time) error
}

func shardFenced(verb func(o *oracleShard, at time.Time) error) func(o *oracleShard, at time.Time) error {
	return func(o *oracleShard, at time.Time) error {
		if o.domain.Status() != shard.Running {
			return fmt.Errorf("not owned: %w", run.ErrLeaseLost)
		}
		return verb(o, at)
	}
}

func shardOracleEvents() []shardEvent {
	finish := func(st shard.Status, e *run.Error) shardEvent {
		o := cluster.Outcome{Status: string(st)}
		if e != nil {
			o.ErrorCode, o.ErrorMessage = string(e.Code), e.Message
		}
		return shardEvent{
			name: "finish " + string(st),
			store: func(e *env, s *oracleShard) error {
				_, err := e.s.FinishShard(e.ctx, e.owner.InstanceID, s.ref, o, (&builder{ok: true}).build)
				return err
			},
			domain: shardFenced(func(o *oracleShard, at time.Time) error { return o.domain.Finish(st, e, at) }),
		}
	}
	return []shardEvent{
		{
			name: "claim",
			store: func(e *env, s *oracleShard) error {
				got, err := e.s.ClaimShards(e.ctx, e.owner, []string{s.pool}, 1, longTTL)
				if err == nil && len(got) == 0 {
					return errors.New("nothing claimed")
				}
				return err
			},
			domain: func(o *oracleShard, at time.Time) error { return o.domain.Claim("member-a", at) },
		},
		finish(shard.Completed, nil),
		finish(shard.Failed, oracleFailure.Error),
		{
			name: "retry",
			store: func(e *env, s *oracleShard) error {
				blind := shard.Rehydrate(s.domain.Snapshot())
				d, err := blind.Fail(oracleFailure, &oraclePolicy, false, time.Now(), 0)
				if err != nil {
					d = run.Decision{}
				}
				o := cluster.Outcome{Status: string(shard.Failed), ErrorCode: string(run.CodePipelineError), ErrorMessage: "boom",
					Retry: d.Retry}
				_, err = e.s.FinishShard(e.ctx, e.owner.InstanceID, s.ref, o, (&builder{ok: true}).build)
				return err
			},
			domain: shardFenced(func(o *oracleShard, at time.Time) error {
				_, err := o.domain.Fail(oracleFailure, &oraclePolicy, o.cancel, at, 0)
				return err
			}),
		},
		{
			name: "hand back",
			store: func(e *env, s *oracleShard) error {
				_, err := e.s.HandBackShard(e.ctx, e.owner.InstanceID, s.ref, cluster.Progress{}, (&builder{ok: true}).build)
				return err
			},
			domain: shardFenced(func(o *oracleShard, at time.Time) error { return o.domain.HandBack(o.cancel, at) }),
		},
		{
			name: "renew",
			store: func(e *env, s *oracleShard) error {
				got, err := e.s.RenewShards(e.ctx, e.owner.InstanceID, []cluster.ShardRef{s.ref}, longTTL)
				if err == nil && len(got) == 0 {
					return fmt.Errorf("not renewed: %w", run.ErrLeaseLost)
				}
				return err
			},
			domain: shardFenced(func(*oracleShard, time.Time) error { return nil }),
		},
		{
			name: "requeue", expired: true, once: true,
			store: func(e *env, _ *oracleShard) error {
				_, err := e.s.ReclaimShards(e.ctx, (&builder{ok: true}).build)
				return err
			},
			domain: func(o *oracleShard, at time.Time) error { return o.domain.Requeue(o.cancel, at) },
		},
	}
}

func addShardOracleCases(out map[string]func(*testing.T, *env)) {
	for _, ev := range shardOracleEvents() {
		out["shards: "+ev.name] = func(t *testing.T, e *env) {
			placed := e.placeShards(t, ev.expired)
			if ev.once {
				require.NoError(t, ev.store(e, nil))
			}
			var diffs []string
			for _, o := range placed {
				before := o.domain.Snapshot()
				var serr error
				if !ev.once {
					serr = ev.store(e, o)
				}
				require.NoError(t, ignoreRefusal(serr), "%s: the store failed", o)
				verr := ev.domain(o, time.Now())
				want := o.domain.Snapshot()
				if verr != nil {
					want = before
				}
				got, err := e.s.Shards(e.ctx, o.ref.RunID, o.ref.Index-1, 1)
				require.NoError(t, err)
				require.Len(t, got, 1)
				var d []string
				if string(want.Status) != got[0].Status {
					d = append(d, fmt.Sprintf("status %s ≠ stored %s", want.Status, got[0].Status))
				}
				if want.Attempt != got[0].Attempt {
					d = append(d, fmt.Sprintf("attempt %d ≠ stored %d", want.Attempt, got[0].Attempt))
				}
				if want.Owner != got[0].Owner {
					d = append(d, fmt.Sprintf("owner %q ≠ stored %q", want.Owner, got[0].Owner))
				}
				if len(d) > 0 {
					diffs = append(diffs, fmt.Sprintf("%s: verb err=%v store err=%v: %s", o, verr, serr, strings.Join(d, "; ")))
				}
			}
			require.Empty(t, diffs, "the store and the domain disagree on shard %q:\n%s", ev.name, strings.Join(diffs, "\n"))
		}
	}
}
