package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
)

// NewVersionCommand is `sluice version`.
func NewVersionCommand(info Info) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the version of this binary",
		Long: "Print the version (the -ldflags version, else the module version, else (devel)), the VCS\n" +
			"commit the binary was built from (\"-dirty\" when the tree had uncommitted changes), the Go\n" +
			"release and the platform.",
		Example: `  sluice version
  sluice version --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(map[string]any{
					"version": info.Version, "commit": info.Commit, "modified": info.Modified,
					"go": info.GoVersion, "platform": info.Platform,
				})
			}
			line := "sluice " + info.Version
			if info.Commit != "" {
				line += " (" + info.Commit + ")"
			}
			_, err := fmt.Fprintf(out, "%s %s %s\n", line, info.GoVersion, info.Platform)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the version as JSON")
	return cmd
}
