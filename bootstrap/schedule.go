package bootstrap

import (
	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/adapters/cli"
)

// addSchedule wires `sluice schedule …` (`next` computes locally; the others call a
// server) and `sluice backfill`.
func addSchedule(root *cobra.Command, p *process) {
	root.AddCommand(cli.NewScheduleCommand(cli.ScheduleDeps{Runs: p.clientDeps()}), cli.NewBackfillCommand(p.clientDeps()))
}
