package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

type validateOptions struct {
	params  []string
	json    bool
	connect bool
}

// validateJSON is `sluice validate --json`.
type validateJSON struct {
	Valid    bool         `json:"valid"`
	Errors   []fieldError `json:"errors"`
	Warnings []string     `json:"warnings"`
	Connect  *connectJSON `json:"connect,omitempty"`
}

type connectJSON struct {
	OK    bool   `json:"ok"`
	Error string `json:"error,omitempty"`
}

// NewValidateCommand is `sluice validate FILE` (SPEC §1.8).
func NewValidateCommand(l Local) *cobra.Command {
	var o validateOptions
	cmd := &cobra.Command{
		Use:   "validate FILE",
		Short: "Check a pipeline config and report every error",
		Long: "Check a pipeline config short of moving data and report every error with its path.\n" +
			"--connect also opens the source and the sink (for SQL connectors: connects and logs in).\n" +
			"A template's ${backfill.start} and ${backfill.end} are checked with the sample window of the\n" +
			"day before now (a backfill gives each run its own window).\n" +
			"Exit code 0 when valid, 2 when invalid, 1 when --connect fails.",
		Example: `  sluice validate orders.yaml
  sluice validate orders.yaml --connect      # also logs in to the source and the sink
  sluice validate bad.yaml --json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return l.validate(cmd, args[0], o) },
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.params, "param", nil, "template param NAME=VALUE (repeatable)")
	f.BoolVar(&o.json, "json", false, `print {"valid","errors","warnings"} as JSON`)
	f.BoolVar(&o.connect, "connect", false, "also open the source and the sink to check connectivity")
	return cmd
}

func (l Local) validate(cmd *cobra.Command, file string, o validateOptions) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	values, err := parseParams(o.params)
	if err != nil {
		return err
	}
	text, baseDir, err := readConfig(file, cmd.InOrStdin())
	if err != nil {
		return l.printed(stderr, ExitUsage, err)
	}
	res := validateJSON{Errors: []fieldError{}, Warnings: []string{}}
	now := l.now()
	day := now.UTC().Truncate(24 * time.Hour)
	cfg, err := l.Loader.Load(cmd.Context(), text, execute.LoadOptions{
		BaseDir: baseDir, Params: values, Logical: now, Zone: time.UTC,
		// A template made for backfills is valid on its own: the directives get a sample
		// window, so their syntax, place and types are checked like any other.
		Backfill: &execute.Window{Start: day.Add(-24 * time.Hour), End: day},
	})
	switch {
	case err != nil && !isConfigError(err):
		return l.printed(stderr, ExitFailure, err)
	case err != nil:
		res.Errors = fieldErrors(err, l.redact)
	default:
		res.Valid = true
		for _, w := range pipeline.RunWarnings(cfg, l.Catalog) {
			res.Warnings = append(res.Warnings, l.redact(w))
		}
	}
	if res.Valid && o.connect {
		log, _ := l.logger(stderr, slog.LevelWarn, LogFormatText) // text never fails
		res.Connect = &connectJSON{OK: true}
		if err := l.Executor.Probe(cmd.Context(), execute.Job{Config: cfg, BaseDir: baseDir, Log: log}); err != nil {
			res.Connect = &connectJSON{Error: l.redact(err.Error())}
		}
	}
	code := ExitOK
	switch {
	case !res.Valid:
		code = ExitUsage
	case res.Connect != nil && !res.Connect.OK:
		code = ExitFailure
	}
	if o.json {
		if err := json.NewEncoder(stdout).Encode(res); err != nil {
			return &ExitError{Code: ExitFailure, Err: err}
		}
	} else {
		l.printValidation(stdout, stderr, file, err, res)
	}
	if code == ExitOK {
		return nil
	}
	return &ExitError{Code: code, Err: errors.New("invalid"), Printed: true}
}

func (l Local) printValidation(stdout, stderr io.Writer, file string, err error, res validateJSON) {
	for _, w := range res.Warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	switch {
	case !res.Valid:
		for _, line := range configLines(file, err) {
			fmt.Fprintln(stderr, "error:", l.redact(line))
		}
	case res.Connect != nil && !res.Connect.OK:
		fmt.Fprintln(stderr, "error: connect:", res.Connect.Error)
	case res.Connect != nil:
		fmt.Fprintln(stdout, "ok (source and sink connected)")
	default:
		fmt.Fprintln(stdout, "ok")
	}
}
