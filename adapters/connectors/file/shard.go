package file

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/shard"
)

// A glob source is sharded by hashing each matched path modulo the shard count (SPEC
// §6.2): every member hashes the same paths the same way, so each file is read by exactly
// one shard without the plan having to list them. One file (a path or an http(s) URL)
// cannot be split and runs whole.

// PlanShards plans n hash buckets over the files the glob matches now, weighed by their
// bytes; a path without a glob, or a URL, plans nothing.
func (c *Connector) PlanShards(ctx context.Context, req execute.ReadRequest, n int) ([]execute.ShardSlice, error) {
	p, err := cfg.String(req.Config, "path", "")
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	if p == "" || isURL(p) || !hasGlob(p) {
		return nil, nil
	}
	ins, err := c.inputs(ctx, execute.ReachOf(req.Reach), req.BaseDir, p)
	if err != nil {
		return nil, err
	}
	out := make([]execute.ShardSlice, n)
	for i := range out {
		out[i] = execute.ShardSlice{Index: i, Count: n}
	}
	for _, in := range ins {
		var size int64 = 1
		if st, err := os.Stat(in.path); err == nil {
			size = max(st.Size(), 1)
		}
		out[shard.HashBucket(in.path, n)].Weight += size
	}
	return out, nil
}

// narrow keeps the inputs of one hash bucket.
func narrow(ins []input, sh *execute.ShardSlice) ([]input, error) {
	if sh == nil {
		return ins, nil
	}
	if sh.Range != nil {
		return nil, errors.New("file: a file source is split by path hash; this shard has a key range")
	}
	out := ins[:0:0]
	for _, in := range ins {
		if in.url == "" && shard.HashBucket(in.path, sh.Count) == sh.Index {
			out = append(out, in)
		}
	}
	return out, nil
}

var _ execute.ShardPlanner = (*Connector)(nil)
