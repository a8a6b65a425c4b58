package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/schollz/progressbar/v3"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
)

// Outcomes of a run as the CLI reports them.
const (
	statusCompleted = "completed"
	statusFailed    = "failed"
	statusCancelled = "cancelled"
)

type statsJSON struct {
	RowsRead    int64 `json:"rows_read"`
	RowsWritten int64 `json:"rows_written"`
	Pages       int64 `json:"pages"`
	Bytes       int64 `json:"bytes"`
	ElapsedMS   int64 `json:"elapsed_ms"`
}

type errorJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// runJSON is `sluice run --json`: the same stats and error shape as a run resource.
type runJSON struct {
	Status   string     `json:"status"`
	Name     string     `json:"name"`
	Stats    statsJSON  `json:"stats"`
	Error    *errorJSON `json:"error"`
	Warnings []string   `json:"warnings"`
}

// outcome is how a run that ended with err is reported: its status and, unless it
// completed, its error (code and redacted message).
func (l Local) outcome(err error) (string, *errorJSON) {
	if err == nil {
		return statusCompleted, nil
	}
	status := statusFailed
	ej := &errorJSON{Code: string(run.CodePipelineError), Message: l.redact(err.Error())}
	var f *execute.Failure
	switch {
	case errors.As(err, &f):
		ej.Code = string(f.Code)
	case errors.Is(err, context.Canceled):
		status, ej.Message = statusCancelled, "cancelled at a page boundary"
	}
	return status, ej
}

// report prints the outcome and returns the command's exit error.
func (l Local) report(out, stderr io.Writer, cfg *pipeline.Config, warnings []string, s execute.Stats, err error, asJSON bool) error {
	status, ej := l.outcome(err)
	code := ExitOK
	if err != nil {
		code = exitFor(err)
	}
	if asJSON {
		if warnings == nil {
			warnings = []string{}
		}
		for i, w := range warnings {
			warnings[i] = l.redact(w)
		}
		res := runJSON{Status: status, Name: cfg.Name, Error: ej, Warnings: warnings, Stats: statsJSON{
			RowsRead: s.RowsRead, RowsWritten: s.RowsWritten, Pages: s.Pages, Bytes: s.Bytes,
			ElapsedMS: s.Elapsed.Milliseconds(),
		}}
		enc := json.NewEncoder(out)
		if e := enc.Encode(res); e != nil {
			return &ExitError{Code: ExitFailure, Err: e}
		}
	} else {
		switch status {
		case statusCompleted:
			fmt.Fprintf(out, "completed: %s\n", summary(s))
		case statusCancelled:
			fmt.Fprintf(stderr, "cancelled: %s\n", summary(s))
		default:
			fmt.Fprintf(stderr, "failed: %s [%s; %s]\n", ej.Message, ej.Code, summary(s))
		}
	}
	if code == ExitOK {
		return nil
	}
	return &ExitError{Code: code, Err: err, Printed: true}
}

// summary is the one-line account of a run: rows, pages, time and throughput.
func summary(s execute.Stats) string {
	return fmt.Sprintf("%d rows read, %d written, %d pages, %s (%s rows/s)",
		s.RowsRead, s.RowsWritten, s.Pages, humanDuration(s.Elapsed), humanCount(s.RowsPerSecond()))
}

func humanDuration(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return d.Round(time.Microsecond).String()
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Second).String()
}

func humanCount(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.1fM", v/1e6)
	case v >= 1e4:
		return fmt.Sprintf("%.0fk", v/1e3)
	case v >= 1e3:
		return fmt.Sprintf("%.1fk", v/1e3)
	}
	return fmt.Sprintf("%.0f", v)
}

// progress shows a run's advance: a bar on a terminal, a log line at most every few
// seconds otherwise, nothing when quiet.
type progress struct {
	bar     *progressbar.ProgressBar
	log     *slog.Logger
	every   time.Duration
	lastLog time.Duration
}

func newProgress(quiet, bar bool, w io.Writer, log *slog.Logger, every time.Duration) *progress {
	if every <= 0 {
		every = 5 * time.Second
	}
	p := &progress{every: every}
	switch {
	case quiet:
	case bar:
		p.bar = progressbar.NewOptions64(-1,
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription("0 rows, 0 pages"),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("rows"),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionSpinnerType(14),
			progressbar.OptionThrottle(100*time.Millisecond),
			// No spinner ticker: its goroutine would keep drawing after the run, over the
			// summary; the bar is redrawn on every confirmed page instead.
			progressbar.OptionSetSpinnerChangeInterval(0),
		)
	default:
		p.log = log
	}
	return p
}

// update is called by the executor after each confirmed page.
func (p *progress) update(s execute.Stats) {
	switch {
	case p.bar != nil:
		p.bar.Describe(fmt.Sprintf("%d rows, %d pages", s.RowsWritten, s.Pages))
		_ = p.bar.Set64(s.RowsWritten)
	case p.log != nil && s.Elapsed-p.lastLog >= p.every:
		p.lastLog = s.Elapsed
		p.log.Info("progress", "rows_read", s.RowsRead, "rows_written", s.RowsWritten, "pages", s.Pages,
			"elapsed", s.Elapsed.Round(time.Millisecond).String(), "rows_per_sec", int64(s.RowsPerSecond()))
	}
}

// done removes the bar so the summary starts on a clean line.
func (p *progress) done() {
	if p.bar != nil {
		_ = p.bar.Exit()
		_ = p.bar.Clear()
	}
}
