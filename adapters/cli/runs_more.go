package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/adapters/cli/client"
)

func newRunsRollback(f *runsFlags) *cobra.Command {
	var configFile string
	var w waitFlags
	cmd := &cobra.Command{
		Use:   "rollback ID",
		Short: "Start a run that undoes a completed run's writes",
		Long: "Start a rollback run of completed run ID (SPEC §1.9). --config FILE replaces the stored config,\n" +
			"e.g. when the original sink moved. With --wait, follow it like `sluice runs wait`.",
		Example: `  sluice runs rollback 01J9Z3K6V4N8Q2R5T7W9Y1B3D5 --wait
  sluice runs rollback 01J9Z3K6V4N8Q2R5T7W9Y1B3D5 --config fixed.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var text []byte
			if configFile != "" {
				var err error
				if text, _, err = readConfig(configFile, cmd.InOrStdin()); err != nil {
					return Usage(fmt.Errorf("--config: %w", err))
				}
			}
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			res, err := c.Rollback(cmd.Context(), args[0], string(text))
			if err != nil {
				return f.apiError(cmd, "roll back run "+args[0], err)
			}
			return f.afterSubmit(cmd, c, res, w)
		},
	}
	cmd.Flags().StringVar(&configFile, "config", "", "config FILE (- for stdin) to roll back with instead of the stored one")
	w.register(cmd.Flags())
	return cmd
}

func newRunsShards(f *runsFlags) *cobra.Command {
	var cursor string
	var limit int
	cmd := &cobra.Command{
		Use:   "shards ID",
		Short: "List the shards of a split run",
		Example: `  sluice runs shards 01J9Z3K6V4N8Q2R5T7W9Y1B3D5
  sluice runs shards 01J9Z3K6V4N8Q2R5T7W9Y1B3D5 -o wide`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			page, err := c.Shards(cmd.Context(), args[0], cursor, limit)
			if err != nil {
				return f.apiError(cmd, "shards of run "+args[0], err)
			}
			return f.printPage(cmd, shardsView(page), "shards", page.NextCursor)
		},
	}
	cmd.Flags().StringVar(&cursor, "cursor", "", "continue after a previous page")
	cmd.Flags().IntVar(&limit, "limit", 0, "shards per page (default: the server's)")
	return cmd
}

func shardsView(page client.ShardsResponse) view {
	names := make([]string, 0, len(page.Shards))
	for _, s := range page.Shards {
		names = append(names, fmt.Sprint(s.Index))
	}
	return view{v: page, names: names, table: func(w io.Writer, wide bool) error {
		g := grid{header: []string{"SHARD", "STATUS", "ATTEMPT", "OWNER", "ROWS WRITTEN"},
			wideHeader: []string{"RANGE", "CLAIMED", "FINISHED", "ERROR"}}
		for _, s := range page.Shards {
			owner, rng, errCode := "-", "-", "-"
			if s.Owner != nil {
				owner = s.Owner.InstanceID
			}
			if s.Range != nil {
				rng = fmt.Sprintf("%d..%d", s.Range.Lo, s.Range.Hi)
				if s.Range.Nulls {
					rng += " +nulls"
				}
			}
			if s.Error != nil {
				errCode = s.Error.Code
			}
			g.add([]string{fmt.Sprint(s.Index), s.Status, fmt.Sprintf("%d/%d", s.Attempt, s.MaxAttempts), owner,
				fmt.Sprint(s.Stats.RowsWritten)}, rng, orDash(deref(s.ClaimedAt)), orDash(deref(s.FinishedAt)), errCode)
		}
		return g.write(w, wide)
	}}
}

func newRunsConfig(f *runsFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "config ID",
		Short: "Print the config a run was submitted with (secrets masked by the server)",
		Example: `  sluice runs config 01J9Z3K6V4N8Q2R5T7W9Y1B3D5 > again.yaml
  sluice runs config 01J9Z3K6V4N8Q2R5T7W9Y1B3D5 -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			text, err := c.Config(cmd.Context(), args[0])
			if err != nil {
				return f.apiError(cmd, "config of run "+args[0], err)
			}
			resp := client.ConfigResponse{RunID: args[0], Config: text}
			return f.print(cmd.OutOrStdout(), view{v: resp, names: []string{args[0]}, table: func(w io.Writer, _ bool) error {
				_, err := io.WriteString(w, text)
				return err
			}})
		},
	}
}
