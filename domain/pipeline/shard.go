package pipeline

import (
	"errors"
	"fmt"
	"strings"
)

// ErrShardRefused is wrapped by *ShardRefusedError: a sharded config that cannot run
// sharded as written (SPEC §6.3). Servers refuse it (422 shard_refused); `sluice run` and
// `sluice validate`, which never shard, only warn.
var ErrShardRefused = errors.New("shard refused")

// ShardRefusedError lists why a config cannot run sharded, each reason saying what to
// change.
type ShardRefusedError struct {
	Reasons []string
}

func (e *ShardRefusedError) Error() string {
	return "shard: " + strings.Join(e.Reasons, "; ")
}

// Is makes errors.Is(err, ErrShardRefused) true.
func (e *ShardRefusedError) Is(target error) bool { return target == ErrShardRefused }

// ShardRefusal checks a config that asks for shards (shard.count ≥ 2) of a shardable
// source against the rules of SPEC §6.3, and answers nil when it may run sharded (or does
// not ask to). Several writers at once must not undo each other's rows: a file sink
// would be written by every shard, an exactly-once sink must write by key, and an
// overwrite would let each shard replace the rows of the others. Key ranges are planned
// anew for every run, so an incremental cursor kept in a state block could skip rows
// that arrive late in a range another shard already passed.
func ShardRefusal(c *Config, cat Catalog) *ShardRefusedError {
	if c == nil || c.ShardCount < 2 || cat == nil {
		return nil
	}
	src, ok := cat.Spec(c.Source.Type)
	if !ok || !src.Shardable {
		return nil // a source that cannot be split runs whole
	}
	var why []string
	if src.KeyRanges {
		if k, _ := c.Source.Config["shard"].(map[string]any); k == nil || k["key"] == nil {
			why = append(why, fmt.Sprintf("shard.count %d splits a %s source by key ranges, but pipeline.source.config.shard.key "+
				"is not set; name the integer column to split by, e.g. shard: {key: id}", c.ShardCount, c.Source.Type))
		}
		if c.Replication.Type == Incremental && (c.State.Type != StateDefault || c.State.Key != "") {
			why = append(why, "an incremental run with a state block cannot be split by key ranges: the ranges are planned "+
				"anew for each run, so the stored cursor could skip rows that arrive late; remove shard, or use replication: {type: full}")
		}
	}
	snk, ok := cat.Spec(c.Sink.Type)
	if ok && snk.SingleObject {
		why = append(why, fmt.Sprintf("the %s sink writes one file, which several shards at once would clobber; "+
			"write to a SQL sink or remove shard", c.Sink.Type))
	}
	mode := WriteMode(c.Sink.String(KeyWriteMode))
	if c.Delivery == ExactlyOnce && mode != Upsert && mode != Delete {
		why = append(why, "delivery: exactly_once of a sharded run needs a sink that writes by key: set write_mode: upsert "+
			"with key: [COLUMNS] in pipeline.sink.config, or remove shard")
	}
	if mode == Overwrite {
		why = append(why, "write_mode: overwrite would let each shard replace the rows the others wrote; "+
			"use write_mode: upsert with key: [COLUMNS], or remove shard")
	}
	if len(why) == 0 {
		return nil
	}
	return &ShardRefusedError{Reasons: why}
}
