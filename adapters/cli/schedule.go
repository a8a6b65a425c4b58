package cli

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/domain/schedule"
)

// MaxPreviewCount bounds --count of `sluice schedule next`.
const MaxPreviewCount = 1000

// ScheduleDeps is what the `schedule` commands need from the composition root; zero
// values work.
type ScheduleDeps struct {
	// Now is the default of --from; nil uses time.Now.
	Now func() time.Time
	// Runs configures the subcommands that talk to a server.
	Runs RunsDeps
}

// NewScheduleCommand is `sluice schedule …`.
func NewScheduleCommand(deps ScheduleDeps) *cobra.Command {
	if deps.Now == nil {
		deps.Now = time.Now
	}
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Preview cron expressions; create, list, pause, resume and delete schedules on a sluice server",
		Example: `  sluice schedule next "30 2 * * *" --timezone Europe/Berlin
  sluice schedule create orders --cron "30 2 * * *" --timezone Europe/Berlin --param day=2026-12-01
  sluice schedule list`,
	}
	cmd.AddCommand(newScheduleNext(deps))
	cmd.AddCommand(scheduleServerCommands(deps.Runs)...)
	return cmd
}

// PreviewInstant is one fire instant as `schedule next --json` prints it.
type PreviewInstant struct {
	UTC   string `json:"utc"`   // RFC 3339 in UTC
	Local string `json:"local"` // RFC 3339 with the zone's offset
	Zone  string `json:"zone"`  // the zone's abbreviation at that instant (EST, CEST, +0530)
}

// Preview is the output of `schedule next --json`.
type Preview struct {
	Cron     string           `json:"cron"`
	Timezone string           `json:"timezone"`
	From     string           `json:"from"`
	Instants []PreviewInstant `json:"instants"`
}

type scheduleNextOptions struct {
	timezone string
	from     string
	count    int
	json     bool
}

func newScheduleNext(deps ScheduleDeps) *cobra.Command {
	var o scheduleNextOptions
	cmd := &cobra.Command{
		Use:   `next "CRON"`,
		Short: "List the next instants a cron expression fires at",
		Long: "Compute, locally, the next instants of a five-field cron expression (or @hourly, @daily,\n" +
			"@weekly, @monthly, @yearly) in an IANA time zone, with the daylight-saving rules schedules use:\n" +
			"a fixed hour follows the wall clock (a time skipped by spring-forward fires at the first minute\n" +
			"after the gap; a repeated time fires once, the first time); an hour of * or a step follows real\n" +
			"time (skipped minutes do not fire; both real instants of a repeated minute do).",
		Example: `  sluice schedule next "30 2 * * *" --timezone America/New_York --from 2026-03-07T12:00:00Z --count 2`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return fmt.Errorf("expected the cron expression as one quoted argument, e.g. sluice schedule next \"30 2 * * *\" (got %d arguments)", len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			p, err := o.preview(args[0], deps.Now())
			if err != nil {
				return err
			}
			if len(p.Instants) < o.count {
				fmt.Fprintf(cmd.ErrOrStderr(), "note: %q fires only %d times in the next %d years\n",
					p.Cron, len(p.Instants), schedule.SearchYears)
			}
			if o.json {
				return writeJSON(cmd.OutOrStdout(), p)
			}
			return printPreview(cmd.OutOrStdout(), p)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.timezone, "timezone", "UTC", "IANA time zone the expression is read in")
	// The zone mirrors serve's --timezone, so SLUICE_TIMEZONE set for a server applies;
	// --from and --count are this call's own and never read the environment.
	_ = fl.SetAnnotation("timezone", AnnotationEnvRead, []string{"true"})
	fl.StringVar(&o.from, "from", "", "list instants strictly after this RFC 3339 time (default now)")
	fl.IntVar(&o.count, "count", 5, fmt.Sprintf("how many instants to list (1 to %d)", MaxPreviewCount))
	fl.BoolVar(&o.json, "json", false, "print JSON instead of a table")
	return cmd
}

// preview validates the arguments (each failure names its flag, exit 2) and computes.
func (o scheduleNextOptions) preview(expr string, now time.Time) (Preview, error) {
	spec, err := schedule.Parse(expr)
	if err != nil {
		return Preview{}, Usage(fmt.Errorf("invalid CRON argument: %w", err))
	}
	loc, err := schedule.LoadZone(o.timezone)
	if err != nil {
		return Preview{}, Usage(fmt.Errorf("invalid value for --timezone: %w", err))
	}
	from := now
	if o.from != "" {
		if from, err = time.Parse(time.RFC3339Nano, o.from); err != nil {
			return Preview{}, Usage(fmt.Errorf("invalid value for --from: %q is not an RFC 3339 time like 2026-03-08T06:00:00Z", o.from))
		}
	}
	if o.count < 1 || o.count > MaxPreviewCount {
		return Preview{}, Usage(fmt.Errorf("invalid value for --count: %d is outside 1..%d", o.count, MaxPreviewCount))
	}
	p := Preview{Cron: spec.String(), Timezone: loc.String(), From: from.UTC().Format(time.RFC3339Nano), Instants: []PreviewInstant{}}
	for _, t := range spec.NextN(from, loc, o.count) {
		zone, _ := t.Zone()
		p.Instants = append(p.Instants, PreviewInstant{
			UTC:   t.UTC().Format(time.RFC3339),
			Local: t.Format(time.RFC3339),
			Zone:  zone,
		})
	}
	return p, nil
}

func printPreview(w io.Writer, p Preview) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "UTC\tLOCAL (%s)\tZONE\n", p.Timezone)
	for _, in := range p.Instants {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", in.UTC, in.Local, in.Zone)
	}
	return tw.Flush()
}
