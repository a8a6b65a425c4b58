package cli

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/adapters/cli/client"
)

func newRunsList(f *runsFlags) *cobra.Command {
	var (
		o      client.ListOptions
		labels []string
	)
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List runs, newest first",
		Long: "List runs, newest first. Filters are flags only: no SLUICE_* variable sets them, so a\n" +
			"SLUICE_POOL exported for a server never narrows what you see.",
		Example: `  sluice runs list
  sluice runs list --status failed,cancelled --pool gpu -o wide
  sluice runs list --label team=data -o name | xargs -n1 sluice runs get`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			lbl, err := parseLabelFlags(labels)
			if err != nil {
				return err
			}
			if o.Limit < 1 || o.Limit > 500 {
				return Usage(fmt.Errorf("invalid value for --limit: %d (want 1 to 500)", o.Limit))
			}
			o.Labels = lbl
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			page, err := c.List(cmd.Context(), o)
			if err != nil {
				return f.apiError(cmd, "list runs", err)
			}
			return f.printPage(cmd, runsView(page.Runs, page), "runs", page.NextCursor)
		},
	}
	fl := cmd.Flags()
	fl.StringSliceVar(&o.Status, "status", nil, "only runs in these statuses (comma list or repeatable)")
	fl.StringVar(&o.Name, "name", "", "only runs of this pipeline name")
	fl.StringVar(&o.Pool, "pool", "", "only runs of this pool")
	fl.StringVar(&o.RunKey, "run-key", "", "only runs with this run key")
	fl.StringArrayVar(&labels, "label", nil, "only runs with label KEY=VALUE (repeatable; all must match)")
	fl.IntVar(&o.Limit, "limit", 50, "runs per page (1 to 500)")
	fl.StringVar(&o.Cursor, "cursor", "", "continue after a previous page (printed when there are more runs)")
	return cmd
}

// runsView prints runs; v is what json and yaml show (the page, with its cursor).
func runsView(list []client.RunResource, v any) view {
	names := make([]string, 0, len(list))
	for _, r := range list {
		names = append(names, r.RunID)
	}
	return view{v: v, names: names, table: func(w io.Writer, wide bool) error {
		g := grid{header: []string{"RUN ID", "NAME", "STATUS", "POOL", "CREATED", "ROWS WRITTEN"},
			wideHeader: []string{"TRIGGER", "ATTEMPT", "OWNER", "FINISHED", "LABELS", "ERROR"}}
		for _, r := range list {
			owner, errCode := "-", "-"
			if r.Owner != nil {
				owner = r.Owner.InstanceID
			}
			if r.Error != nil {
				errCode = r.Error.Code
			}
			g.add([]string{r.RunID, r.Name, r.Status, r.Pool, showTime(r.CreatedAt), fmt.Sprint(r.Stats.RowsWritten)},
				r.TriggerKind, fmt.Sprintf("%d/%d", r.Attempt, r.MaxAttempts), owner, showTime(r.FinishedAt),
				orDash(labelText(r.Labels)), errCode)
		}
		return g.write(w, wide)
	}}
}

func labelText(labels map[string]string) string {
	pairs := make([]string, 0, len(labels))
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		pairs = append(pairs, k+"="+labels[k])
	}
	return strings.Join(pairs, ",")
}

func showTime(t *time.Time) string {
	if t == nil {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func newRunsGet(f *runsFlags) *cobra.Command {
	return &cobra.Command{
		Use:   "get ID",
		Short: "Show one run",
		Example: `  sluice runs get 01J9Z3K6V4N8Q2R5T7W9Y1B3D5
  sluice runs get 01J9Z3K6V4N8Q2R5T7W9Y1B3D5 -o yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			r, err := c.Get(cmd.Context(), args[0])
			if err != nil {
				return f.apiError(cmd, "get run "+args[0], err)
			}
			return f.print(cmd.OutOrStdout(), runView(r))
		},
	}
}

func runView(r client.RunResource) view {
	return view{v: r, names: []string{r.RunID}, table: func(w io.Writer, wide bool) error {
		printRun(w, r, wide)
		return nil
	}}
}

func printRun(w io.Writer, r client.RunResource, wide bool) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s:\t%s\n", k, v) }
	row("run id", r.RunID)
	row("name", r.Name)
	row("status", r.Status)
	row("pool", r.Pool)
	if r.Tenant != nil {
		row("tenant", *r.Tenant)
	}
	if len(r.Labels) > 0 {
		row("labels", labelText(r.Labels))
	}
	row("trigger", r.TriggerKind)
	if r.RunKey != nil {
		row("run key", *r.RunKey)
	}
	row("run date", r.RunDate)
	row("attempt", fmt.Sprintf("%d of %d", r.Attempt, r.MaxAttempts))
	if r.Owner != nil {
		row("owner", r.Owner.InstanceID+" ("+r.Owner.Listen+")")
	}
	row("created", showTime(r.CreatedAt))
	row("started", showTime(r.StartedAt))
	row("finished", showTime(r.FinishedAt))
	row("stats", statsLine(r.Stats))
	if r.Error != nil {
		row("error", r.Error.Code+": "+r.Error.Message)
	}
	if r.Template != nil {
		row("template", fmt.Sprintf("%s v%d", r.Template.ID, r.Template.Version))
	}
	if r.Retry != nil {
		row("retry", fmt.Sprintf("up to %d attempts on %s failures, waits %gs to %gs (×%g)", r.Retry.MaxAttempts,
			r.Retry.On, r.Retry.InitialSecs, r.Retry.MaxSecs, r.Retry.Multiplier))
	}
	if r.NotBefore != nil {
		row("next attempt", "not before "+showTime(r.NotBefore))
	}
	if wide {
		row("claimed", showTime(r.ClaimedAt))
	}
	// Every attempt in wide output; otherwise the failed ones, which say why it retried.
	for _, a := range r.Attempts {
		if !wide && a.Error == nil {
			continue
		}
		line := fmt.Sprintf("%s %s → %s: %s", a.InstanceID, showTime(a.ClaimedAt), showTime(a.EndedAt), orDash(deref(a.Outcome)))
		if a.Error != nil {
			line += " (" + a.Error.Code + ": " + a.Error.Message + ")"
		}
		row(fmt.Sprintf("attempt %d", a.N), line)
	}
	_ = tw.Flush()
}

func newRunsCancel(f *runsFlags) *cobra.Command {
	var runKey, name string
	cmd := &cobra.Command{
		Use:   "cancel ID | --run-key KEY",
		Short: "Cancel a run by id, or by its run key",
		Example: `  sluice runs cancel 01J9Z3K6V4N8Q2R5T7W9Y1B3D5
  sluice runs cancel --run-key 2026-03-01 --name orders`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if (len(args) == 1) == (runKey != "") {
				return Usage(errors.New("give either a run ID or --run-key, not both and not neither"))
			}
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			id := ""
			if len(args) == 1 {
				id = args[0]
			} else if id, err = f.findByRunKey(cmd, c, runKey, name); err != nil {
				return err
			}
			r, ended, err := c.Cancel(cmd.Context(), id)
			if err != nil {
				return f.apiError(cmd, "cancel run "+id, err)
			}
			if f.output != OutputTable && f.output != OutputWide {
				return f.print(cmd.OutOrStdout(), runView(r))
			}
			if ended {
				fmt.Fprintf(cmd.OutOrStdout(), "run %s is %s\n", r.RunID, r.Status)
			} else {
				fmt.Fprintf(cmd.OutOrStdout(), "cancel requested: run %s stops at its next page boundary\n", r.RunID)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&runKey, "run-key", "", "cancel the run with this run key")
	cmd.Flags().StringVar(&name, "name", "", "with --run-key: the pipeline name, when several pipelines use the key")
	return cmd
}

// findByRunKey resolves a run key to one run id; a key used by several pipelines must be
// narrowed with --name.
func (f *runsFlags) findByRunKey(cmd *cobra.Command, c *client.Client, key, name string) (string, error) {
	page, err := c.List(cmd.Context(), client.ListOptions{RunKey: key, Name: name, Limit: 10})
	if err != nil {
		return "", f.apiError(cmd, "find run key "+key, err)
	}
	switch len(page.Runs) {
	case 0:
		return "", &ExitError{Code: ExitFailure, Err: fmt.Errorf("no run has run key %q", key)}
	case 1:
		return page.Runs[0].RunID, nil
	}
	ids := make([]string, 0, len(page.Runs))
	for _, r := range page.Runs {
		ids = append(ids, r.RunID+" ("+r.Name+")")
	}
	return "", Usage(fmt.Errorf("run key %q matches %d runs: %s; add --name or give the run ID",
		key, len(page.Runs), strings.Join(ids, ", ")))
}

func newRunsLogs(f *runsFlags) *cobra.Command {
	var follow bool
	cmd := &cobra.Command{
		Use:   "logs ID",
		Short: "Print a run's log lines; -f follows them until the run ends",
		Example: `  sluice runs logs 01J9Z3K6V4N8Q2R5T7W9Y1B3D5
  sluice runs logs 01J9Z3K6V4N8Q2R5T7W9Y1B3D5 -f -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			print := func(l client.LogLine) error { return f.printLogLine(out, l) }
			if follow {
				status, err := c.FollowLogs(cmd.Context(), args[0], 0, print)
				if err != nil {
					return f.apiError(cmd, "follow logs of run "+args[0], err)
				}
				if !f.json {
					fmt.Fprintf(cmd.ErrOrStderr(), "run %s ended: %s\n", args[0], status)
				}
				return nil
			}
			var after int64
			for {
				page, err := c.Logs(cmd.Context(), args[0], after, 0)
				if err != nil {
					return f.apiError(cmd, "logs of run "+args[0], err)
				}
				for _, l := range page.Lines {
					if err := print(l); err != nil {
						return err
					}
				}
				if len(page.Lines) == 0 || page.NextAfter <= after {
					return nil
				}
				after = page.NextAfter
			}
		},
	}
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "stream new lines until the run ends")
	return cmd
}

// printLogLine writes one line: JSON per line with -o json (a YAML document with -o
// yaml), else time, level, message and attributes.
func (f *runsFlags) printLogLine(w io.Writer, l client.LogLine) error {
	switch f.output {
	case OutputJSON:
		return writeJSON(w, l)
	case OutputYAML:
		if _, err := fmt.Fprintln(w, "---"); err != nil {
			return err
		}
		return writeYAML(w, l)
	}
	var b strings.Builder
	b.WriteString(l.At.UTC().Format(time.RFC3339))
	b.WriteString(" " + l.Level + " " + l.Message)
	for _, k := range slices.Sorted(maps.Keys(l.Attrs)) {
		fmt.Fprintf(&b, " %s=%v", k, l.Attrs[k])
	}
	_, err := fmt.Fprintln(w, b.String())
	return err
}

func newRunsDelete(f *runsFlags) *cobra.Command {
	return &cobra.Command{
		Use:     "delete ID",
		Short:   "Delete a terminal run with its logs",
		Example: `  sluice runs delete 01J9Z3K6V4N8Q2R5T7W9Y1B3D5`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			if err := c.Delete(cmd.Context(), args[0]); err != nil {
				return f.apiError(cmd, "delete run "+args[0], err)
			}
			if f.output == OutputJSON || f.output == OutputYAML {
				return f.encode(cmd.OutOrStdout(), map[string]any{"run_id": args[0], "deleted": true})
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "deleted run %s\n", args[0])
			return err
		},
	}
}
