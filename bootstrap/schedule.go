package bootstrap

import (
	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/adapters/cli"
)

// addSchedule wires `sluice schedule …`; `next` computes locally and needs nothing else.
func addSchedule(root *cobra.Command, _ *process) {
	root.AddCommand(cli.NewScheduleCommand(cli.ScheduleDeps{}))
}
