package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/secret"
	"github.com/sluicehq/sluice/domain/state"
)

type runOptions struct {
	params    []string
	quiet     bool
	dataDir   string
	json      bool
	timeout   time.Duration
	logLevel  string
	logFormat string
	otlp      string
}

// NewRunCommand is `sluice run FILE` (SPEC §1.8).
func NewRunCommand(l Local) *cobra.Command {
	var o runOptions
	cmd := &cobra.Command{
		Use:   "run FILE",
		Short: "Run one pipeline in the foreground",
		Long: "Run one pipeline in the foreground and print a one-line summary.\n" +
			"Exit code 0 on success, 1 when the pipeline fails or is interrupted, 2 on a config error.\n" +
			"FILE may be - to read the config from stdin.",
		Example: `  sluice run orders.yaml
  sluice run orders.tpl.yaml --param day=2026-12-01 --timeout 10m
  sluice run orders.yaml --json --quiet
  cat orders.yaml | sluice run -`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return l.run(cmd, args[0], o) },
	}
	EnvAll(cmd) // run's flags are its process settings, like serve's
	f := cmd.Flags()
	f.StringArrayVar(&o.params, "param", nil, "template param NAME=VALUE (repeatable)")
	f.BoolVar(&o.quiet, "quiet", false, "show no progress bar and no progress log lines")
	f.StringVar(&o.dataDir, "data-dir", DefaultDataDir, "directory of the local state file state.json")
	f.BoolVar(&o.json, "json", false, "print the outcome as one JSON object instead of a summary line")
	f.DurationVar(&o.timeout, "timeout", 0, "stop the run after this long, e.g. 10m (0 = no limit)")
	f.StringVar(&o.logLevel, "log-level", "info", "least level of log lines: debug, info, warn or error")
	f.StringVar(&o.logFormat, "log-format", LogFormatAuto, LogFormatUsage)
	f.StringVar(&o.otlp, "otlp-endpoint", "", OTLPEndpointUsage)
	_ = f.SetAnnotation("otlp-endpoint", AnnotationEnvAlias, []string{OTelEndpointEnv})
	return cmd
}

func (l Local) run(cmd *cobra.Command, file string, o runOptions) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	level, err := parseLevel(o.logLevel)
	if err != nil {
		return err
	}
	if o.timeout < 0 {
		return Usage(fmt.Errorf("invalid value for --timeout: %s is negative", o.timeout))
	}
	if o.dataDir == "" {
		return Usage(errors.New("invalid value for --data-dir: empty"))
	}
	if err := CheckOTLPEndpoint(o.otlp); err != nil {
		return Usage(err)
	}
	cfg, baseDir, err := l.load(cmd, file, o.params)
	if err != nil {
		return err
	}
	warnings := pipeline.RunWarnings(cfg, l.Catalog)
	for _, w := range warnings {
		fmt.Fprintln(stderr, "warning:", l.redact(w))
	}

	// The summary goes where the data does not: a stdout sink owns stdout.
	out := stdout
	if writesStdout(cfg.Sink) {
		out = stderr
	}
	bar := !o.quiet && !o.json && l.IsTerminal != nil && l.IsTerminal(stderr)
	if bar && !cmd.Flags().Changed("log-level") {
		level = slog.LevelWarn // log lines would tear the bar apart
	}
	log, err := l.logger(stderr, level, o.logFormat)
	if err != nil {
		return err
	}
	job := execute.Job{Config: cfg, BaseDir: baseDir, Timeout: o.timeout, Log: log}
	switch {
	case cfg.Delivery == pipeline.ExactlyOnce:
		// The sink's watermark holds the position; only its key is needed.
		job.StateKey = stateKey(cfg)
	case cfg.Replication.Type == pipeline.Incremental:
		if job.State, job.StateKey, err = l.openState(cmd.Context(), cfg, o.dataDir); err != nil {
			return l.printed(stderr, exitFor(err), err)
		}
	}
	prog := newProgress(o.quiet || o.json, bar, stderr, log, l.ProgressEvery)
	job.Progress = prog.update

	ctx, stop := interruptible(cmd.Context(), stderr)
	defer stop()
	trace, err := l.startTrace(ctx, o.otlp, cfg, log)
	if err != nil {
		return err
	}
	job.Span = trace.span
	log.Info("run started", "pipeline", cfg.Name, "source", cfg.Source.Type, "sink", cfg.Sink.Type)
	stats, err := l.Executor.Run(trace.ctx, job)
	prog.done()
	l.endTrace(trace, stats, err, log)
	return l.report(out, stderr, cfg, warnings, stats, err, o.json)
}

// load reads and validates FILE; config errors are printed one per line (exit 2).
func (l Local) load(cmd *cobra.Command, file string, params []string) (*pipeline.Config, string, error) {
	stderr := cmd.ErrOrStderr()
	values, err := parseParams(params)
	if err != nil {
		return nil, "", err
	}
	text, baseDir, err := readConfig(file, cmd.InOrStdin())
	if err != nil {
		return nil, "", l.printed(stderr, ExitUsage, err)
	}
	cfg, err := l.Loader.Load(cmd.Context(), text, execute.LoadOptions{
		BaseDir: baseDir, Params: values, Logical: l.now(), Zone: time.UTC,
	})
	if err != nil {
		if !isConfigError(err) {
			return nil, "", l.printed(stderr, ExitFailure, err)
		}
		for _, line := range configLines(file, err) {
			fmt.Fprintln(stderr, "error:", l.redact(line))
		}
		return nil, "", &ExitError{Code: ExitUsage, Err: err, Printed: true}
	}
	return cfg, baseDir, nil
}

func (l Local) openState(ctx context.Context, cfg *pipeline.Config, dataDir string) (execute.StateStore, string, error) {
	if l.OpenState == nil {
		return nil, "", errors.New("state: no state store available")
	}
	st, err := l.OpenState(ctx, cfg.State, dataDir)
	if err != nil {
		return nil, "", fmt.Errorf("state: %w", err)
	}
	return st, stateKey(cfg), nil
}

// stateKey is state.key, else {tenant}/{name} of an untenanted pipeline (SPEC §1.6).
func stateKey(cfg *pipeline.Config) string {
	if cfg.State.Key != "" {
		return cfg.State.Key
	}
	return state.Key("", cfg.Name)
}

func (l Local) logger(w io.Writer, level slog.Level, format string) (*slog.Logger, error) {
	h, err := NewLogHandler(w, format, &slog.HandlerOptions{Level: level}, l.IsTerminal != nil && l.IsTerminal(w))
	if err != nil {
		return nil, err
	}
	if l.Redactor != nil {
		h = secret.NewHandler(h, l.Redactor)
	}
	return slog.New(h), nil
}

// printed writes err (redacted) and returns an ExitError that Execute will not print again.
func (l Local) printed(w io.Writer, code int, err error) error {
	fmt.Fprintln(w, "error:", l.redact(err.Error()))
	return &ExitError{Code: code, Err: err, Printed: true}
}

// exitFor maps an error to its exit code: config problems are 2, everything else 1.
func exitFor(err error) int {
	var f *execute.Failure
	if isConfigError(err) || (errors.As(err, &f) && f.Code == run.CodeConfigError) {
		return ExitUsage
	}
	return ExitFailure
}

func parseLevel(s string) (slog.Level, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(s)); err != nil {
		return 0, Usage(fmt.Errorf("invalid value for --log-level: %q (want debug, info, warn or error)", s))
	}
	return level, nil
}

// writesStdout tells whether the sink's output is this process's stdout.
func writesStdout(c pipeline.Connector) bool {
	if c.Type == "stdout" {
		return true
	}
	switch strings.TrimSpace(c.String("path")) {
	case "-", "/dev/stdout":
		return true
	}
	return false
}

// interruptible cancels the run on the first SIGINT/SIGTERM, which the executor honours at
// the next page boundary. The handler is then removed, so a second signal ends the process
// at once (the default action).
func interruptible(parent context.Context, stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancel(parent)
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			signal.Stop(sigs)
			fmt.Fprintln(stderr, "interrupted: stopping at the next page boundary (interrupt again to quit now)")
			cancel()
		case <-done:
		}
	}()
	return ctx, func() {
		close(done)
		signal.Stop(sigs)
		cancel()
	}
}
