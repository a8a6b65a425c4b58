package cli

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/adapters/cli/client"
)

// NewAuditCommand is `sluice audit`: the server's audit log (admins only).
func NewAuditCommand(deps RunsDeps) *cobra.Command {
	f := &runsFlags{deps: deps}
	var after int64
	var limit int
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "List the server's audit log, oldest first (admin token)",
		Example: `  sluice audit --limit 20
  sluice audit --after 120 -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			page, err := c.Audit(cmd.Context(), after, limit)
			if err != nil {
				return f.apiError(cmd, "read the audit log", err)
			}
			names := make([]string, 0, len(page.Entries))
			for _, e := range page.Entries {
				names = append(names, e.Action)
			}
			err = f.print(cmd.OutOrStdout(), view{v: page, names: names, table: func(w io.Writer, wide bool) error {
				g := grid{header: []string{"AT", "ACTOR", "ACTION", "RUN ID"}, wideHeader: []string{"DETAILS"}}
				for _, e := range page.Entries {
					g.add([]string{e.At, e.Actor, e.Action, orDash(deref(e.RunID))}, orDash(detailsText(e.Details)))
				}
				return g.write(w, wide)
			}})
			if err == nil && len(page.Entries) > 0 && f.output != OutputJSON && f.output != OutputYAML {
				fmt.Fprintf(cmd.ErrOrStderr(), "next page: add --after %d\n", page.NextAfter)
			}
			return err
		},
	}
	cmd.Flags().Int64Var(&after, "after", 0, "entries after this position (printed after each page)")
	cmd.Flags().IntVar(&limit, "limit", 0, "entries per page (default: the server's)")
	return cmd
}

func detailsText(m map[string]any) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, m[k]))
	}
	return strings.Join(parts, " ")
}

// NewClusterCommand is `sluice cluster status`: the members the server sees.
func NewClusterCommand(deps RunsDeps) *cobra.Command {
	f := &runsFlags{deps: deps}
	cmd := &cobra.Command{Use: "cluster", Short: "Show the cluster a sluice server belongs to",
		Example: "  sluice cluster status -o wide"}
	cmd.AddCommand(&cobra.Command{
		Use:   "status",
		Short: "Show the member's health and every live member with its pools and load",
		Example: `  sluice cluster status
  sluice cluster status --context prod -o wide`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			r, err := c.Ready(cmd.Context())
			if err != nil {
				return f.apiError(cmd, "cluster status", err)
			}
			names := make([]string, 0, len(r.Cluster.Members))
			for _, m := range r.Cluster.Members {
				names = append(names, m.InstanceID)
			}
			return f.print(cmd.OutOrStdout(), view{v: r, names: names, table: func(w io.Writer, wide bool) error {
				return clusterTable(w, r, wide)
			}})
		},
	})
	return cmd
}

func clusterTable(w io.Writer, r client.Readiness, wide bool) error {
	mode := "single node"
	if r.Cluster.Enabled {
		mode = "cluster"
	}
	fmt.Fprintf(w, "status: %s (%s, %d members; history ok: %t, draining: %t)\n", r.Status, mode,
		r.Cluster.Instances, r.HistoryOK, r.Draining)
	g := grid{header: []string{"INSTANCE", "LISTEN", "POOLS", "IN FLIGHT"}, wideHeader: []string{"MAX CONCURRENT"}}
	for _, m := range r.Cluster.Members {
		g.add([]string{m.InstanceID, m.Listen, strings.Join(m.Pools, ","), fmt.Sprintf("%d/%d", m.InFlight, m.MaxConcurrent)},
			fmt.Sprint(m.MaxConcurrent))
	}
	return g.write(w, wide)
}
