package shard_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/shard"
)

func TestParentOutcome(t *testing.T) {
	t.Parallel()
	cases := map[string]struct {
		c       shard.Counts
		cancel  bool
		status  run.Status
		done    bool
		code    run.ErrorCode
		message string
	}{
		"pending left":                 {shard.Counts{Total: 8, Pending: 1, Completed: 7}, false, run.Sharded, false, "", ""},
		"running left":                 {shard.Counts{Total: 8, Running: 1, Failed: 7}, false, run.Sharded, false, "", ""},
		"running left, cancel":         {shard.Counts{Total: 8, Running: 2, Cancelled: 6}, true, run.Sharded, false, "", ""},
		"no shards yet":                {shard.Counts{}, false, run.Sharded, false, "", ""},
		"uncounted shards":             {shard.Counts{Total: 8, Completed: 7}, false, run.Sharded, false, "", ""},
		"all completed":                {shard.Counts{Total: 8, Completed: 8}, false, run.Completed, true, "", ""},
		"all completed despite cancel": {shard.Counts{Total: 2, Completed: 2}, true, run.Completed, true, "", ""},
		"cancelled":                    {shard.Counts{Total: 8, Completed: 3, Cancelled: 5}, true, run.Cancelled, true, "", ""},
		"cancel wins over fail":        {shard.Counts{Total: 8, Completed: 3, Failed: 1, Cancelled: 4}, true, run.Cancelled, true, "", ""},
		"some failed":                  {shard.Counts{Total: 8, Completed: 6, Failed: 2}, false, run.Failed, true, run.CodeShardFailed, "2 of 8 shards failed"},
		"all failed":                   {shard.Counts{Total: 3, Failed: 3}, false, run.Failed, true, run.CodeShardFailed, "3 of 3 shards failed"},
		"failed and cancelled":         {shard.Counts{Total: 4, Completed: 1, Failed: 2, Cancelled: 1}, false, run.Failed, true, run.CodeShardFailed, "2 of 4 shards failed, 1 cancelled"},
		"total left zero":              {shard.Counts{Completed: 4}, false, run.Completed, true, "", ""},
		"single shard failed":          {shard.Counts{Total: 1, Failed: 1}, false, run.Failed, true, run.CodeShardFailed, "1 of 1 shards failed"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			status, done, err := shard.ParentOutcome(tc.c, tc.cancel)
			require.Equal(t, tc.status, status)
			require.Equal(t, tc.done, done)
			if tc.code == "" {
				require.Nil(t, err)
				return
			}
			require.Equal(t, &run.Error{Code: tc.code, Message: tc.message}, err)
			// The outcome is one the parent can actually move to.
			require.True(t, run.CanTransition(run.Sharded, status))
		})
	}
}
