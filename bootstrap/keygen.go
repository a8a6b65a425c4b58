package bootstrap

import (
	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/adapters/cli"
	"github.com/sluicehq/sluice/adapters/vault"
)

// addKeygen wires `sluice keygen`: the cli command with the vault adapter's generator.
func addKeygen(root *cobra.Command, _ *process) {
	root.AddCommand(cli.NewKeygenCommand(vault.GenerateKey))
}
