package store

import (
	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/application/runs"
)

// The ports this package implements.
var (
	_ runs.Store           = (*Store)(nil)
	_ cluster.Store        = (*Store)(nil)
	_ cluster.ShardStore   = (*Store)(nil)
	_ cluster.OutboxStore  = (*Store)(nil)
	_ cluster.Roster       = (*Store)(nil)
	_ cluster.PoolTimeouts = (*Store)(nil)
	_ cluster.Purger       = (*Store)(nil)
	_ runs.Roster          = (*Store)(nil)
	_ execute.StateStore   = (*Store)(nil)
)
