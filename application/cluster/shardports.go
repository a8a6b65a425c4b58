package cluster

import (
	"context"
	"time"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// ShardRef names an owned shard and the epoch it is held at.
type ShardRef struct {
	RunID string
	Index int
	Epoch int64
}

// ClaimedShard is a shard this member now owns, with what it needs of its parent run.
type ClaimedShard struct {
	Ref         ShardRef
	Attempt     int
	MaxAttempts int
	// Slice narrows the parent's source to this shard.
	Slice execute.ShardSlice
	// Run is the parent run as a claim would have returned it; its Epoch, Attempt,
	// MaxAttempts and ElapsedMS (the running time of earlier attempts) are the shard's.
	Run Claimed
}

// ReclaimedShard reports one shard whose lease expired and what became of it, and the
// parent's terminal status when that reclaim ended the run ("" otherwise).
type ReclaimedShard struct {
	RunID   string
	Index   int
	Outcome string // requeued | failed | cancelled
	Parent  string
}

// ShardReclaim is what one ReclaimShards call did.
type ShardReclaim struct {
	Shards []ReclaimedShard
	// Settled maps the sharded runs the backstop ended to their terminal status.
	Settled map[string]string
	// Names maps every run this call ended (a shard's Parent set, or in Settled) to its
	// name, so the run is counted under its pipeline.
	Names map[string]string
}

// ShardStore is what the member needs from the history to split runs into shards and
// execute them (SPEC §6). Writes about an owned shard are fenced like those about an
// owned run: (owner, epoch) and an unexpired lease by the database clock; zero rows is
// run.ErrLeaseLost.
type ShardStore interface {
	// PlanShards inserts the shard rows of an owned run (idempotently: a plan already
	// stored is kept) and moves the run to sharded, in ONE transaction fenced on the
	// run's (owner, epoch). The run's lease ends with it: from then on each shard has
	// its own.
	PlanShards(ctx context.Context, owner string, ref Ref, plan []execute.ShardSlice) error
	// ClaimShards moves up to n pending shards of pools to running for owner in ONE
	// statement, largest first, incrementing attempt and lease_epoch, setting the lease
	// to db_now + ttl.
	ClaimShards(ctx context.Context, owner Owner, pools []string, n int, ttl time.Duration) ([]ClaimedShard, error)
	// RenewShards extends the leases of held in ONE statement and returns the refs it
	// renewed; a held ref missing from the answer has lost its lease.
	RenewShards(ctx context.Context, owner string, held []ShardRef, ttl time.Duration) ([]ShardRef, error)
	// ShardProgress records counters of an owned shard (fenced).
	ShardProgress(ctx context.Context, owner string, ref ShardRef, p Progress) error
	// FinishShard ends an owned shard (fenced) and, in the same transaction, ends the
	// parent run once no shard of it is pending or running (shard.ParentOutcome), with
	// the parent's callback outbox row. It answers the parent's terminal status, or ""
	// while siblings are unfinished.
	FinishShard(ctx context.Context, owner string, ref ShardRef, o Outcome, build runs.CallbackBuilder) (string, error)
	// HandBackShard returns an owned shard to pending without spending an attempt — or
	// ends it cancelled when its run's cancel was requested (fenced). It answers the
	// parent's terminal status when that ended the run.
	HandBackShard(ctx context.Context, owner string, ref ShardRef, p Progress, build runs.CallbackBuilder) (string, error)
	// ReclaimShards ends expired shard leases of any owner: run cancel requested →
	// cancelled; attempt < maxAttempts → pending; else failed (poisoned); a shard that
	// ends the last of its run ends the run too. It also ends sharded runs none of whose
	// shards is unfinished (the backstop of FinishShard).
	ReclaimShards(ctx context.Context, build runs.CallbackBuilder) (ShardReclaim, error)
	// ReclaimOrphanShards is ReclaimShards for running shards owned by anyone but self,
	// lease expired or not: a single server holding the history lock calls it at start,
	// when every such shard was left by a process that is gone (SPEC §2.1).
	ReclaimOrphanShards(ctx context.Context, self string, build runs.CallbackBuilder) (ShardReclaim, error)
}

// Planner splits the read of a config into shards; *execute.Executor implements it. nil
// from Plan means the source cannot be sharded and the run executes whole.
type Planner interface {
	Plan(ctx context.Context, cfg *pipeline.Config, n int) ([]execute.ShardSlice, error)
}
