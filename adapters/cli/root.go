package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
)

// Exit codes shared by every command (SPEC §1.8).
const (
	ExitOK      = 0
	ExitFailure = 1 // the pipeline (or the operation) failed
	ExitUsage   = 2 // a config error, a bad flag or a bad argument
	// ExitProposed (3), ExitWaitTimeout (4) and ExitInterrupted (130): see wait.go.
)

// ExitError carries the exit code a command wants. Printed says the command already wrote
// its message (e.g. one line per config error), so Execute adds nothing.
type ExitError struct {
	Code    int
	Err     error
	Printed bool
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// Usage marks err as a usage error (exit 2).
func Usage(err error) error { return &ExitError{Code: ExitUsage, Err: err} }

// Info is what `sluice version` reports.
type Info struct {
	Version   string
	Commit    string // 12 hex digits, with "-dirty" when Modified; "" when unknown
	Modified  bool   // built from a tree with uncommitted changes (vcs.modified)
	GoVersion string
	Platform  string
}

// Env is the process environment as the CLI sees it; tests pass their own.
type Env struct {
	Lookup func(string) (string, bool)
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

// OSEnv is the real process environment.
func OSEnv() Env {
	return Env{Lookup: os.LookupEnv, Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr}
}

// IsTerminal reports whether w is an interactive terminal (a character device).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// NewRoot is the `sluice` command; bootstrap adds the subcommands.
func NewRoot(info Info) *cobra.Command {
	root := &cobra.Command{
		Use:   "sluice",
		Short: "sluice moves data: run pipelines once, or serve them over HTTP",
		Long: "sluice moves data from a source to a sink in pages, saving a bookmark after every\n" +
			"confirmed page. The global flags (--server, --token, --data-dir, --context, --output) and the\n" +
			"flags of serve, run and migrate can also be set with SLUICE_<FLAG> (e.g. --data-dir → SLUICE_DATA_DIR);\n" +
			"the filters of a single call (runs list --pool …) never read the environment.",
		Example: `  sluice init demo && cd demo && sluice run orders.yaml
  sluice serve --allow-path . &
  sluice runs submit orders.yaml --wait
  sluice runs list -o wide`,
		Version:       info.Version,
		SilenceErrors: true,
		SilenceUsage:  true,
	}
	root.CompletionOptions.DisableDefaultCmd = true
	addGlobalFlags(root)
	return root
}

// Execute runs root with args (without the program name) and returns the exit code. Errors
// a command did not print are printed to stderr here, so every command ends the same way.
func Execute(ctx context.Context, root *cobra.Command, args []string, env Env) int {
	if env.Lookup == nil {
		env.Lookup = func(string) (string, bool) { return "", false }
	}
	prepare(root, env.Lookup)
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	cmd, err := root.ExecuteContextC(ctx)
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if !errors.As(err, &ee) {
		// Whatever cobra itself refuses (an unknown command) is a usage error.
		ee = &ExitError{Code: ExitUsage, Err: err}
	}
	if !ee.Printed {
		fmt.Fprintln(env.Stderr, "error:", ee.Error())
		if ee.Code == ExitUsage {
			if cmd == nil {
				cmd = root
			}
			fmt.Fprintf(env.Stderr, "Run '%s --help' for usage.\n", cmd.CommandPath())
		}
	}
	return ee.Code
}
