package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// NewCompletionCommand is `sluice completion bash|zsh|fish|powershell`: the shell script
// that completes commands, flags, -o formats and connector types.
func NewCompletionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "Print the shell completion script for bash, zsh, fish or PowerShell",
		Long: "Print a script that makes your shell complete sluice's commands and flags. Load it once per\n" +
			"session, or install it where your shell reads completions at start.",
		Example: `  source <(sluice completion bash)
  sluice completion zsh > "${fpath[1]}/_sluice"
  sluice completion fish > ~/.config/fish/completions/sluice.fish
  sluice completion powershell | Out-String | Invoke-Expression`,
		ValidArgs: []string{"bash", "zsh", "fish", "powershell"},
		Args:      cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			root, out := cmd.Root(), cmd.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(out, true)
			case "zsh":
				return root.GenZshCompletion(out)
			case "fish":
				return root.GenFishCompletion(out, true)
			case "powershell":
				return root.GenPowerShellCompletionWithDesc(out)
			}
			return Usage(fmt.Errorf("unknown shell %q: want bash, zsh, fish or powershell", args[0]))
		},
	}
}
