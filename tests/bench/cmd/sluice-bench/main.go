package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/sluicehq/sluice/tests/bench/harness"
	"github.com/sluicehq/sluice/tests/bench/suites"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the program; 0 all cases measured, 1 a case or the setup failed, 2 bad flags.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	reg, err := suites.Registry()
	if err != nil {
		fmt.Fprintln(stderr, "sluice-bench:", err)
		return 1
	}
	opts, err := harness.ParseArgs(args, os.Getenv, reg, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "sluice-bench:", err)
		return 2
	}
	suite, err := reg.Lookup(opts.Suite)
	if err != nil {
		fmt.Fprintln(stderr, "sluice-bench:", err)
		return 2
	}
	cases, err := harness.Select(suite, opts.Only)
	if err != nil {
		fmt.Fprintln(stderr, "sluice-bench:", err)
		return 2
	}
	report, err := measure(ctx, opts, suite, cases, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "sluice-bench:", err)
		return 1
	}
	if err := report.Write(stdout, opts.Markdown); err != nil {
		fmt.Fprintln(stderr, "sluice-bench:", err)
		return 1
	}
	for _, r := range report.Results {
		if r.Err != nil {
			return 1
		}
	}
	return 0
}

func measure(ctx context.Context, opts harness.Options, suite harness.Suite, cases []harness.Case, log io.Writer) (report harness.Report, err error) {
	root, err := harness.ModuleRoot(ctx)
	if err != nil {
		return report, err
	}
	dir, err := os.MkdirTemp("", "sluice-bench-")
	if err != nil {
		return report, fmt.Errorf("temp dir: %w", err)
	}
	env := &harness.Env{Root: root, Dir: dir, Rows: opts.Rows, Keep: opts.Keep, Log: log}
	defer func() {
		if opts.Keep {
			env.Progress("kept %s", dir)
			return
		}
		if rmErr := os.RemoveAll(dir); rmErr != nil && err == nil {
			err = fmt.Errorf("remove temp dir: %w", rmErr)
		}
	}()
	if env.Sluice, err = sluiceBinary(ctx, env, opts.Bin); err != nil {
		return report, err
	}
	if suite.Table != nil {
		table, err := suite.Table(ctx, env)
		if err != nil {
			return report, fmt.Errorf("suite %s: %w", suite.Name, err)
		}
		return harness.Report{Suite: suite.Name, Machine: harness.ProbeMachine(ctx), Command: opts.CommandLine(),
			Notes: env.Notes(), Table: &table}, nil
	}
	results, err := harness.RunSuite(ctx, env, suite, cases, opts.Repeat)
	if err != nil {
		return report, err
	}
	return harness.Report{
		Suite:   suite.Name,
		Rows:    opts.Rows,
		Repeat:  opts.Repeat,
		Machine: harness.ProbeMachine(ctx),
		Command: opts.CommandLine(),
		Notes:   env.Notes(),
		Results: results,
	}, nil
}

// sluiceBinary builds tmp/sluice from the module root, or checks the prebuilt one --bin
// names (made absolute: pipelines run in the temp directory).
func sluiceBinary(ctx context.Context, env *harness.Env, bin string) (string, error) {
	if bin == "" {
		return env.Build(ctx, ".", "sluice")
	}
	abs, err := filepath.Abs(bin)
	if err != nil {
		return "", fmt.Errorf("invalid value for --bin: %w", err)
	}
	info, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("invalid value for --bin: %w", err)
	}
	if info.IsDir() || info.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("invalid value for --bin: %s is not an executable file", abs)
	}
	env.Note("sluice binary: %s (prebuilt, --bin).", abs)
	return abs, nil
}
