package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/adapters/cli/client"
)

// NewChangeRequestsCommand is `sluice change-requests list|get|approve|reject` (SPEC §9.5):
// runs proposed under --require-approval, decided by another operator.
func NewChangeRequestsCommand(deps RunsDeps) *cobra.Command {
	f := &runsFlags{deps: deps}
	cmd := &cobra.Command{
		Use:     "change-requests",
		Aliases: []string{"cr"},
		Short:   "List, show, approve and reject proposed runs waiting for another operator",
		Example: `  sluice change-requests list --status proposed
  sluice change-requests approve 01J9Z3K6V4N8Q2R5T7W9Y1B3D5 --wait`,
	}
	cmd.AddCommand(newCRList(f), newCRGet(f), newCRDecide(f, true), newCRDecide(f, false))
	return cmd
}

func newCRList(f *runsFlags) *cobra.Command {
	var status, cursor string
	var limit int
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List change requests, newest first",
		Example: `  sluice change-requests list --status proposed
  sluice change-requests list -o name | head -1 | xargs sluice change-requests approve`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			page, err := c.ChangeRequests(cmd.Context(), status, cursor, limit)
			if err != nil {
				return f.apiError(cmd, "list change requests", err)
			}
			return f.printPage(cmd, crView(page, page.ChangeRequests...), "change requests", page.NextCursor)
		},
	}
	cmd.Flags().StringVar(&status, "status", "", "only change requests in this status: proposed, approved, rejected or expired")
	cmd.Flags().StringVar(&cursor, "cursor", "", "continue after a previous page")
	cmd.Flags().IntVar(&limit, "limit", 0, "change requests per page (default: the server's)")
	_ = cmd.RegisterFlagCompletionFunc("status", cobra.FixedCompletions(
		[]string{"proposed", "approved", "rejected", "expired"}, cobra.ShellCompDirectiveNoFileComp))
	return cmd
}

func newCRGet(f *runsFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "get ID",
		Short: "Show one change request, and the run it became once approved",
		Example: `  sluice change-requests get 01J9Z3K6V4N8Q2R5T7W9Y1B3D5
  sluice change-requests get 01J9Z3K6V4N8Q2R5T7W9Y1B3D5 -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			cr, err := c.ChangeRequest(cmd.Context(), args[0])
			if err != nil {
				return f.apiError(cmd, "get change request "+args[0], err)
			}
			return f.print(cmd.OutOrStdout(), crView(cr, cr))
		},
	}
}

func newCRDecide(f *runsFlags, approve bool) *cobra.Command {
	verb, short := "reject", "Reject a pending change request: its run is never created"
	if approve {
		verb, short = "approve", "Approve another operator's pending change request: its run is created"
	}
	var w waitFlags
	cmd := &cobra.Command{
		Use:     verb + " ID",
		Short:   short,
		Example: "  sluice change-requests " + verb + " 01J9Z3K6V4N8Q2R5T7W9Y1B3D5",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			cr, err := c.Decide(cmd.Context(), args[0], approve)
			if err != nil {
				return f.apiError(cmd, verb+" change request "+args[0], err)
			}
			if w.wait && cr.RunID != nil {
				fmt.Fprintf(cmd.ErrOrStderr(), "approved: run %s; waiting for it to end\n", *cr.RunID)
				return f.wait(cmd, c, *cr.RunID, w.timeout.d)
			}
			if f.output != OutputTable && f.output != OutputWide {
				return f.print(cmd.OutOrStdout(), crView(cr, cr))
			}
			line := fmt.Sprintf("change request %s %s", cr.ID, cr.Status)
			if cr.RunID != nil {
				line += ": run " + *cr.RunID
			}
			_, err = fmt.Fprintln(cmd.OutOrStdout(), line)
			return err
		},
	}
	if approve {
		w.register(cmd.Flags())
	}
	return cmd
}

func crView(v any, list ...client.ChangeRequest) view {
	names := make([]string, 0, len(list))
	for _, cr := range list {
		names = append(names, cr.ID)
	}
	return view{v: v, names: names, table: func(w io.Writer, wide bool) error {
		g := grid{header: []string{"ID", "NAME", "STATUS", "PROPOSER", "CREATED", "RUN ID"},
			wideHeader: []string{"POOL", "TENANT", "TRIGGER", "EXPIRES", "DECIDED BY", "DECIDED"}}
		for _, cr := range list {
			g.add([]string{cr.ID, cr.Name, cr.Status, cr.Proposer, cr.CreatedAt, orDash(deref(cr.RunID))},
				cr.Pool, orDash(deref(cr.Tenant)), cr.TriggerKind, cr.ExpiresAt, orDash(deref(cr.DecidedBy)),
				orDash(deref(cr.DecidedAt)))
		}
		return g.write(w, wide)
	}}
}
