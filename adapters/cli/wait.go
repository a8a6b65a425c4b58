package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/adapters/cli/client"
)

// Exit codes of waiting commands beyond 0–2 (SPEC §14.7).
const (
	ExitProposed    = 3   // the run became a change request waiting for approval
	ExitWaitTimeout = 4   // the wait ended before the run did; the run goes on
	ExitInterrupted = 130 // Ctrl-C stopped the wait (the shell's convention); the run goes on
)

const waitExitCodes = "Exit codes: 0 the run completed, 1 it failed or was cancelled, 2 a usage or config error,\n" +
	"3 it was proposed and waits for approval, 4 --timeout passed first (the run goes on), 130 Ctrl-C (the run goes on)."

// proposedExit is the exit of a call whose run became change request id (exit 3).
func proposedExit(id string) error {
	return &ExitError{Code: ExitProposed, Err: fmt.Errorf("change request %s waits for approval", id), Printed: true}
}

// waitFlags are --wait and --wait-timeout of the commands that start a run.
type waitFlags struct {
	wait    bool
	timeout durationFlag
}

func (w *waitFlags) register(fl *pflag.FlagSet) {
	fl.BoolVar(&w.wait, "wait", false, "follow the run until it ends; the exit code tells how it ended (see sluice runs wait --help)")
	w.timeout.register(fl, "wait-timeout", "", "with --wait: stop waiting after this long, e.g. 10m, and exit 4 (0 = no limit)")
}

// afterSubmit prints what a submission made and, with --wait, follows the run.
func (f *runsFlags) afterSubmit(cmd *cobra.Command, c *client.Client, res client.SubmitResponse, w waitFlags) error {
	if res.ChangeRequestID != "" {
		if err := f.printSubmitted(cmd.OutOrStdout(), res); err != nil {
			return err
		}
		// Nothing runs until another operator approves, with --wait or without: a
		// script must not read "0" as "the run exists".
		return proposedExit(res.ChangeRequestID)
	}
	if !w.wait {
		return f.printSubmitted(cmd.OutOrStdout(), res)
	}
	if f.output == OutputTable || f.output == OutputWide {
		fmt.Fprintf(cmd.ErrOrStderr(), "%s; waiting for it to end\n", submittedLine(res))
	}
	return f.wait(cmd, c, res.RunID, w.timeout.d)
}

// wait follows the run's log stream (server-sent events) until the server says it ended,
// so it returns as soon as the server knows — there is no polling interval on this side.
// On a terminal it keeps one progress line on stderr.
func (f *runsFlags) wait(cmd *cobra.Command, c *client.Client, id string, timeout time.Duration) error {
	stderr := cmd.ErrOrStderr()
	interrupt := f.deps.Interrupt
	if interrupt == nil {
		interrupt = func(ctx context.Context) (context.Context, context.CancelFunc) {
			return signal.NotifyContext(ctx, os.Interrupt)
		}
	}
	ctx, stop := interrupt(cmd.Context())
	defer stop()
	waitCtx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		waitCtx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	isTerminal := f.deps.IsTerminal
	if isTerminal == nil {
		isTerminal = IsTerminal
	}
	p := newWaitLine(stderr, id, isTerminal(stderr))
	var after int64
	for {
		_, err := c.FollowLogs(waitCtx, id, after, func(l client.LogLine) error {
			after = max(after, l.Seq)
			p.line(l)
			return nil
		})
		p.clear()
		switch {
		case err == nil:
			r, err := c.Get(ctx, id)
			if err != nil {
				return f.apiError(cmd, "get run "+id, err)
			}
			return f.finished(cmd, r)
		case errors.Is(err, client.ErrStreamEnded):
			continue // a proxy or a restart closed the stream: pick it up where it stopped
		case ctx.Err() != nil:
			fmt.Fprintf(stderr, "interrupted: stopped waiting; run %s continues on the server (`sluice runs wait %s` follows it again, `sluice runs cancel %s` stops it)\n",
				id, id, id)
			return &ExitError{Code: ExitInterrupted, Err: ctx.Err(), Printed: true}
		case waitCtx.Err() != nil:
			fmt.Fprintf(stderr, "stopped waiting after %s (--timeout): run %s continues on the server\n", timeout, id)
			return &ExitError{Code: ExitWaitTimeout, Err: waitCtx.Err(), Printed: true}
		default:
			return f.apiError(cmd, "wait for run "+id, err)
		}
	}
}

// waitLine is the one status line a terminal shows while waiting.
type waitLine struct {
	w       io.Writer
	id      string
	on      bool
	lines   int
	started time.Time
	shown   bool
}

func newWaitLine(w io.Writer, id string, on bool) *waitLine {
	return &waitLine{w: w, id: id, on: on, started: time.Now()}
}

func (p *waitLine) line(l client.LogLine) {
	p.lines++
	if !p.on {
		return
	}
	msg := l.Message
	if len(msg) > 60 {
		msg = msg[:57] + "..."
	}
	elapsed := time.Since(p.started).Truncate(100 * time.Millisecond)
	fmt.Fprintf(p.w, "\r\033[Krun %s · %s · %d log lines · %s", p.id, elapsed, p.lines, strings.TrimSpace(msg))
	p.shown = true
}

func (p *waitLine) clear() {
	if p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

func newRunsWait(f *runsFlags) *cobra.Command {
	var timeout durationFlag
	cmd := &cobra.Command{
		Use:   "wait ID",
		Short: "Wait until a run ends; the exit code tells how it ended",
		Long:  "Follow run ID's log stream until the run ends and print how it ended.\n" + waitExitCodes,
		Example: `  sluice runs wait 01J9Z3K6V4N8Q2R5T7W9Y1B3D5
  sluice runs wait 01J9Z3K6V4N8Q2R5T7W9Y1B3D5 --timeout 10m || echo "exit $?"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			return f.wait(cmd, c, args[0], timeout.d)
		},
	}
	timeout.register(cmd.Flags(), "timeout", "", "stop waiting after this long, e.g. 10m, and exit 4 (0 = no limit)")
	return cmd
}

// durationFlag is a Go duration (10m, 90s, 1h30m). The old whole-seconds flag, when
// named, stays as a hidden alias so scripts keep working.
type durationFlag struct{ d time.Duration }

func (d *durationFlag) register(fl *pflag.FlagSet, name, secsAlias, usage string) {
	fl.Var(durationValue{&d.d}, name, usage)
	if secsAlias == "" {
		return
	}
	fl.Var(secondsValue{&d.d}, secsAlias, "the same as --"+name+" in whole seconds")
	_ = fl.MarkHidden(secsAlias)
}

func (d durationFlag) seconds() int {
	if d.d <= 0 {
		return 0
	}
	return int((d.d + time.Second - 1) / time.Second)
}

// durationValue is a non-negative Go duration.
type durationValue struct{ d *time.Duration }

func (v durationValue) String() string {
	if v.d == nil {
		return "0s"
	}
	return v.d.String()
}

func (v durationValue) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return fmt.Errorf("%q is not a duration like 90s, 10m or 1h30m", s)
	}
	*v.d = d
	return nil
}

func (durationValue) Type() string { return "duration" }

// secondsValue sets a duration from whole seconds.
type secondsValue struct{ d *time.Duration }

func (s secondsValue) String() string {
	if s.d == nil {
		return "0"
	}
	return fmt.Sprint(int64(*s.d / time.Second))
}

func (s secondsValue) Set(v string) error {
	var n int64
	if _, err := fmt.Sscan(v, &n); err != nil || n < 0 {
		return fmt.Errorf("%q is not a number of seconds", v)
	}
	*s.d = time.Duration(n) * time.Second
	return nil
}

func (secondsValue) Type() string { return "seconds" }
