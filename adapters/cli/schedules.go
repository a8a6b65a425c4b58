package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/adapters/cli/client"
)

// scheduleServerCommands are `sluice schedule create|list|pause|resume|delete|ticks`.
func scheduleServerCommands(deps RunsDeps) []*cobra.Command {
	cmds := []*cobra.Command{newScheduleCreate(deps), newScheduleList(deps), newScheduleTicks(deps)}
	for _, verb := range []string{"get", "pause", "resume", "delete"} {
		cmds = append(cmds, newScheduleChange(deps, verb))
	}
	return cmds
}

func newScheduleCreate(deps RunsDeps) *cobra.Command {
	f := &runsFlags{deps: deps}
	var req client.ScheduleRequest
	var params, labels []string
	cmd := &cobra.Command{
		Use:   "create TEMPLATE --cron CRON",
		Short: "Create a schedule that runs TEMPLATE on a cron",
		Example: `  sluice schedule create orders --cron "30 2 * * *" --timezone Europe/Berlin --param day=2026-12-01
  sluice schedule create orders --cron @hourly --start-date 2026-03-01 --catchup --max-catchup-runs 24 --overlap queue`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			var err error
			if req.Params, err = parseKeyValues(params, "--param"); err != nil {
				return err
			}
			if req.Labels, err = parseLabelFlags(labels); err != nil {
				return err
			}
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			sc, err := c.CreateSchedule(cmd.Context(), args[0], req)
			if err != nil {
				return f.apiError(cmd, "create a schedule on "+args[0], err)
			}
			return f.print(cmd.OutOrStdout(), oneScheduleView(sc))
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&req.Cron, "cron", "", "five cron fields or a macro (@hourly, @daily, …)")
	fl.StringVar(&req.Timezone, "timezone", "", "IANA zone the cron is read in (default: the server's --timezone)")
	fl.StringVar(&req.StartDate, "start-date", "", "local date of the first tick, YYYY-MM-DD (default: after now)")
	fl.BoolVar(&req.Catchup, "catchup", false, "after downtime, run up to --max-catchup-runs missed ticks, not only the latest")
	fl.IntVar(&req.MaxCatchupRuns, "max-catchup-runs", 0, "missed ticks run with --catchup, 1 to 1000 (default 1)")
	fl.StringVar(&req.OverlapPolicy, "overlap", "", "skip (default) or queue a tick while an earlier run of the same schedule is still queued or active")
	fl.StringArrayVar(&params, "param", nil, "template param NAME=VALUE (repeatable)")
	fl.StringArrayVar(&labels, "label", nil, "label KEY=VALUE of its runs (repeatable)")
	fl.StringVar(&req.Pool, "pool", "", "pool its runs execute in")
	// Without a cron the server can only refuse; say so here, before the round trip.
	_ = cmd.MarkFlagRequired("cron")
	return cmd
}

func newScheduleList(deps RunsDeps) *cobra.Command {
	f := &runsFlags{deps: deps}
	cmd := &cobra.Command{
		Use:     "list",
		Example: "  sluice schedule list\n  sluice schedule list -o json",
		Short:   "List schedules with their last and next tick",
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			list, err := c.ListSchedules(cmd.Context())
			if err != nil {
				return f.apiError(cmd, "list schedules", err)
			}
			return f.print(cmd.OutOrStdout(), scheduleView(list...))
		},
	}
	return cmd
}

// newScheduleChange is get, pause, resume or delete of one schedule.
func newScheduleChange(deps RunsDeps, verb string) *cobra.Command {
	f := &runsFlags{deps: deps}
	short := map[string]string{
		"get":    "Show one schedule with its last and next tick",
		"pause":  "Pause a schedule: its due ticks are recorded skipped (paused)",
		"resume": "Resume a paused schedule from its next tick",
		"delete": "Delete a schedule and its ticks (the runs it created stay)",
	}[verb]
	cmd := &cobra.Command{
		Use:     verb + " ID",
		Example: "  sluice schedule " + verb + " 01J9Z3K6V4N8Q2R5T7W9Y1B3D5",
		Short:   short,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			if verb == "delete" {
				if err := c.DeleteSchedule(cmd.Context(), args[0]); err != nil {
					return f.apiError(cmd, "delete schedule "+args[0], err)
				}
				_, err := fmt.Fprintf(cmd.OutOrStdout(), "deleted schedule %s\n", args[0])
				return err
			}
			var sc client.Schedule
			if verb == "get" {
				sc, err = c.GetSchedule(cmd.Context(), args[0])
			} else {
				sc, err = c.SetSchedulePaused(cmd.Context(), args[0], verb == "pause")
			}
			if err != nil {
				return f.apiError(cmd, verb+" schedule "+args[0], err)
			}
			return f.print(cmd.OutOrStdout(), oneScheduleView(sc))
		},
	}
	return cmd
}

func newScheduleTicks(deps RunsDeps) *cobra.Command {
	f := &runsFlags{deps: deps}
	var before string
	var limit int
	cmd := &cobra.Command{
		Use:     "ticks ID",
		Example: "  sluice schedule ticks 01J9Z3K6V4N8Q2R5T7W9Y1B3D5 --limit 20",
		Short:   "List a schedule's recorded ticks, newest first",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			page, err := c.ScheduleTicks(cmd.Context(), args[0], before, limit)
			if err != nil {
				return f.apiError(cmd, "ticks of schedule "+args[0], err)
			}
			return f.print(cmd.OutOrStdout(), ticksView(page))
		},
	}
	cmd.Flags().StringVar(&before, "before", "", "ticks before this RFC 3339 instant (the next page)")
	cmd.Flags().IntVar(&limit, "limit", 0, "ticks per page, 1 to 1000 (default 100)")
	return cmd
}

// scheduleView shows a list of schedules in the format -o chose; JSON and YAML are the
// body of GET /v1/schedules, as every other list prints its REST shape.
func scheduleView(list ...client.Schedule) view {
	if list == nil {
		list = []client.Schedule{}
	}
	return schedulesView(struct {
		Schedules []client.Schedule `json:"schedules"`
	}{list}, list)
}

// oneScheduleView shows one schedule (JSON: the object).
func oneScheduleView(sc client.Schedule) view { return schedulesView(sc, []client.Schedule{sc}) }

func schedulesView(v any, list []client.Schedule) view {
	names := make([]string, 0, len(list))
	for _, s := range list {
		names = append(names, s.ID)
	}
	return view{v: v, names: names, table: func(w io.Writer, wide bool) error {
		g := grid{header: []string{"ID", "TEMPLATE", "CRON", "TIMEZONE", "PAUSED", "LAST TICK", "NEXT TICK"},
			wideHeader: []string{"OVERLAP", "POOL"}}
		for _, s := range list {
			g.add([]string{s.ID, s.TemplateID, s.Cron, s.Timezone, fmt.Sprint(s.Paused),
				orDash(deref(s.LastTick)), orDash(deref(s.NextTick))}, orDash(s.OverlapPolicy), orDash(deref(s.Pool)))
		}
		return g.write(w, wide)
	}}
}

// NewBackfillCommand is `sluice backfill`: one run per window of a time range (SPEC §9.4).
func NewBackfillCommand(deps RunsDeps) *cobra.Command {
	f := &runsFlags{deps: deps}
	var req client.BackfillRequest
	var params []string
	var configFile string
	cmd := &cobra.Command{
		Use:   "backfill [TEMPLATE] --from TIME --to TIME --window DURATION",
		Short: "Run a template (or --config FILE) once per window of a time range on a sluice server",
		Long: "Cut [--from, --to) into windows of the ISO 8601 --window (P1D, PT6H, P1W, P1M), stepped in wall time\n" +
			"in --timezone, and start one run per window with ${backfill.start} and ${backfill.end} set. Posting the\n" +
			"same backfill again creates nothing new. At most --max-active of its runs execute at once.",
		Example: `  sluice backfill orders --from 2026-03-01T00:00:00Z --to 2026-04-01T00:00:00Z --window P1D --param token=…`,
		Args:    cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 1 && configFile != "":
				return Usage(fmt.Errorf("give a TEMPLATE or --config, not both"))
			case len(args) == 1:
				req.Template = args[0]
			case configFile != "":
				text, _, err := readConfig(configFile, cmd.InOrStdin())
				if err != nil {
					return Usage(err)
				}
				req.Config = string(text)
			default:
				return Usage(fmt.Errorf("give a TEMPLATE id or --config FILE"))
			}
			var err error
			if req.Params, err = parseKeyValues(params, "--param"); err != nil {
				return err
			}
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			res, err := c.Backfill(cmd.Context(), req)
			if err != nil {
				return f.apiError(cmd, "backfill", err)
			}
			if f.json {
				if err := writeJSON(cmd.OutOrStdout(), res); err != nil {
					return err
				}
				if res.ChangeRequestID != "" {
					return proposedExit(res.ChangeRequestID)
				}
				return nil
			}
			if res.ChangeRequestID != "" {
				if _, err := fmt.Fprintf(cmd.OutOrStdout(), "backfill %s: proposed change request %s: its runs start once another operator approves it\n",
					res.BackfillID, res.ChangeRequestID); err != nil {
					return err
				}
				return proposedExit(res.ChangeRequestID)
			}
			w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintf(w, "backfill %s: %d runs\n", res.BackfillID, len(res.Runs))
			fmt.Fprintln(w, "RUN\tSTART\tEND")
			for _, r := range res.Runs {
				fmt.Fprintf(w, "%s\t%s\t%s\n", r.RunID, r.Start, r.End)
			}
			return w.Flush()
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&configFile, "config", "", "a pipeline config FILE (- for stdin) instead of a template")
	fl.StringVar(&req.From, "from", "", "start of the first window (RFC 3339)")
	fl.StringVar(&req.To, "to", "", "end of the last window (RFC 3339)")
	fl.StringVar(&req.Window, "window", "", "window length as an ISO 8601 duration: P1D, PT6H, P1W, P1M")
	fl.StringVar(&req.Timezone, "timezone", "", "IANA zone the windows step in (default: the server's --timezone)")
	fl.StringArrayVar(&params, "param", nil, "template param NAME=VALUE (repeatable)")
	fl.StringVar(&req.Pool, "pool", "", "pool its runs execute in")
	fl.IntVar(&req.MaxActive, "max-active", 0, "runs of the backfill executing at once, 1 to 1000 (default 1)")
	// The range and the window have no default on the server either: refused here first.
	for _, name := range []string{"from", "to", "window"} {
		_ = cmd.MarkFlagRequired(name)
	}
	return cmd
}

// ticksView shows one page of ticks; -o name lists the runs they created.
func ticksView(page client.TicksResponse) view {
	var names []string
	for _, tk := range page.Ticks {
		if id := deref(tk.RunID); id != "" {
			names = append(names, id)
		}
	}
	return view{v: page, names: names, table: func(w io.Writer, _ bool) error {
		g := grid{header: []string{"INSTANT", "STATUS", "RUN", "REASON"}}
		for _, tk := range page.Ticks {
			reason := deref(tk.Reason)
			if tk.SummaryCount != nil {
				reason = fmt.Sprintf("%s (%d ticks from %s)", reason, *tk.SummaryCount, deref(tk.SummaryFirst))
			}
			g.add([]string{tk.Instant, tk.Status, orDash(deref(tk.RunID)), orDash(reason)})
		}
		if err := g.write(w, false); err != nil {
			return err
		}
		if page.NextBefore != nil {
			_, err := fmt.Fprintf(w, "(more: --before %s)\n", *page.NextBefore)
			return err
		}
		return nil
	}}
}
