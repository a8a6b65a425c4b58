package cluster

import (
	"time"

	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/shard"
)

// The member's decisions about what it executes (how an attempt ended, whether a plan
// may be stored) are the domain's verbs applied to its copy of the item. That copy is
// made the way the history made the stored one: the item as it was pending before the
// claim, claimed by the domain's Claim — so the attempt count, owner and open attempt
// the verbs see are the claim's rules, not a hand-written imitation of them.

// heldRun is the domain's copy of a run this member claimed as c.
func heldRun(c Claimed, owner string, at time.Time) (*run.Run, error) {
	r := run.Rehydrate(run.Snapshot{ID: c.ID, Name: c.Name, Pool: c.Pool, Tenant: c.Tenant, Status: run.Pending,
		Attempt: c.Attempt - 1, MaxAttempts: c.MaxAttempts, Retry: c.Retry, CreatedAt: c.CreatedAt})
	if err := r.Claim(owner, at); err != nil {
		return nil, err
	}
	return r, nil
}

// heldShard is the domain's copy of a shard this member claimed as s.
func heldShard(s ClaimedShard, owner string, at time.Time) (*shard.Shard, error) {
	sh := shard.Rehydrate(shard.Snapshot{RunID: s.Ref.RunID, Index: s.Ref.Index, Pool: s.Run.Pool, Status: shard.Pending,
		Attempt: s.Attempt - 1, MaxAttempts: s.MaxAttempts})
	if err := sh.Claim(owner, at); err != nil {
		return nil, err
	}
	return sh, nil
}
