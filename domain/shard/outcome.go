package shard

import (
	"fmt"

	"github.com/sluicehq/sluice/domain/run"
)

// Counts are the shards of one parent by status.
type Counts struct {
	Total, Pending, Running, Completed, Failed, Cancelled int
}

// Unfinished is how many shards may still change.
func (c Counts) Unfinished() int { return c.Pending + c.Running }

// ParentOutcome decides how a sharded parent ends (SPEC §6.1). While any shard is pending
// or running the parent is not done. Then: completed when every shard completed;
// cancelled when the run's cancel was requested; otherwise failed with shard_failed,
// naming how many shards failed. Siblings of a failed shard are allowed to finish first,
// so the count is final when the message is written.
func ParentOutcome(c Counts, cancelRequested bool) (status run.Status, done bool, err *run.Error) {
	total := c.Pending + c.Running + c.Completed + c.Failed + c.Cancelled
	if total == 0 || total < c.Total || c.Unfinished() > 0 {
		// No shards means the planning transaction has not committed yet; fewer counted
		// than the total means some shard's status is not known. Neither is an ending.
		return run.Sharded, false, nil
	}
	switch {
	case c.Completed == total:
		return run.Completed, true, nil
	case cancelRequested:
		return run.Cancelled, true, nil
	}
	msg := fmt.Sprintf("%d of %d shards failed", c.Failed, total)
	if c.Cancelled > 0 {
		msg += fmt.Sprintf(", %d cancelled", c.Cancelled)
	}
	return run.Failed, true, &run.Error{Code: run.CodeShardFailed, Message: msg}
}
