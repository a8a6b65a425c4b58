package execute

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/shard"
)

// ShardSlice narrows a read to one shard of a sharded run (SPEC §6.2). A key-range shard
// reads the rows whose shard key (source.config.shard.key) lies in Range, plus the rows
// with a NULL key when Range.Nulls; a hash-bucket shard (Range nil) reads the files whose
// path hashes to Index modulo Count.
type ShardSlice struct {
	Index int
	Count int // how many shards the plan has
	Range *shard.Range
	// Weight is the planner's size estimate (keys in the range, files in the bucket);
	// members claim the largest shards first.
	Weight int64
}

// ShardPlanner is implemented by source connectors that can split a read (SPEC §6.2).
type ShardPlanner interface {
	// PlanShards splits the read of req into at most n shards, indexed 0.. in order. An
	// empty plan means this particular read cannot be split (one http(s) file) and runs
	// whole. A shard key that is not an integer column of the read is an error wrapping
	// ErrShardKey.
	PlanShards(ctx context.Context, req ReadRequest, n int) ([]ShardSlice, error)
}

// ErrShardKey is wrapped by planning errors about source.config.shard.key: the run fails
// with shard_key_invalid.
var ErrShardKey = errors.New("invalid shard key")

// Plan asks the source of cfg for a plan of n shards (the coordinator's step, SPEC
// §6.1). It answers nil when the source cannot be sharded (its connector plans nothing,
// or this read cannot be split): the run then executes whole. Failures are *Failure
// with shard_key_invalid for a bad shard key and config_error otherwise.
func (e *Executor) Plan(ctx context.Context, cfg *pipeline.Config, n int) ([]ShardSlice, error) {
	if cfg == nil {
		return nil, &Failure{Code: run.CodeConfigError, Err: errors.New("no pipeline config")}
	}
	if e.Registry == nil {
		return nil, &Failure{Code: run.CodeConfigError, Err: errors.New("no connector registry")}
	}
	conn, ok := e.Registry.Source(cfg.Source.Type)
	if !ok {
		return nil, &Failure{Code: run.CodeConfigError, Role: RoleSource, Connector: cfg.Source.Type,
			Err: fmt.Errorf("unknown source type %q", cfg.Source.Type)}
	}
	planner, ok := conn.(ShardPlanner)
	if !ok || n < 2 {
		return nil, nil
	}
	r := &runner{cfg: cfg, log: e.logger(Job{}), reach: e.reachFor}
	var plan []ShardSlice
	err := safely(func() error {
		var err error
		plan, err = planner.PlanShards(ctx, r.readRequest(nil), n)
		return err
	})
	if err != nil {
		code := run.CodeConfigError
		if errors.Is(err, ErrShardKey) {
			code = run.CodeShardKeyInvalid
		}
		if c, ok := refusalCode(err); ok {
			code = c
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("plan shards: %w", ctx.Err())
		}
		return nil, &Failure{Code: code, Role: RoleSource, Connector: cfg.Source.Type, Err: fmt.Errorf("plan shards: %w", err)}
	}
	for i, s := range plan {
		if s.Index != i || s.Count != len(plan) {
			return nil, &Failure{Code: run.CodePipelineError, Role: RoleSource, Connector: cfg.Source.Type,
				Err: fmt.Errorf("plan shards: shard %d of %d is numbered %d of %d", i, len(plan), s.Index, s.Count)}
		}
	}
	return plan, nil
}
