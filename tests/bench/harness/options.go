package harness

import (
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// EnvRows is the environment variable that sets the row count when --rows is not given.
const EnvRows = "SLUICE_BENCH_ROWS"

// DefaultRows is the row count when neither --rows nor SLUICE_BENCH_ROWS is set.
const DefaultRows = 1_000_000

// ProgramPath is how the program is started from the module root (the bench task).
const ProgramPath = "./tests/bench/cmd/sluice-bench"

// Options are the program's parsed flags.
type Options struct {
	Rows int64
	// RowsFromEnv says the row count came from SLUICE_BENCH_ROWS (so the printed command
	// line carries it).
	RowsFromEnv bool
	Suite       string
	Only        []string
	Keep        bool
	Markdown    bool
	Repeat      int
	// Bin is a prebuilt sluice binary to measure instead of building one.
	Bin string
	// Args are the arguments as given, for the printed command line.
	Args []string
}

// ParseArgs parses the program's arguments (without the program name). getenv reads
// SLUICE_BENCH_ROWS; help text goes to usage. It returns flag.ErrHelp for --help.
func ParseArgs(args []string, getenv func(string) string, reg *Registry, usage io.Writer) (Options, error) {
	// The first registered suite is the default (foundation, in the program's list).
	o := Options{Suite: reg.defaultSuite(), Repeat: 1, Args: args}
	fs := flag.NewFlagSet("sluice-bench", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are returned; help is printed below
	rows := fs.String("rows", "", "")
	only := fs.String("only", "", "")
	fs.StringVar(&o.Suite, "suite", o.Suite, "")
	fs.BoolVar(&o.Keep, "keep", false, "")
	fs.BoolVar(&o.Markdown, "markdown", false, "")
	fs.IntVar(&o.Repeat, "repeat", o.Repeat, "")
	fs.StringVar(&o.Bin, "bin", "", "")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			fmt.Fprint(usage, Usage(reg))
			return o, err
		}
		return o, fmt.Errorf("%w (see --help)", err)
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q: every setting is a flag (see --help)", fs.Arg(0))
	}
	var err error
	switch {
	case *rows != "":
		if o.Rows, err = ParseRows(*rows); err != nil {
			return o, fmt.Errorf("invalid value for --rows: %w", err)
		}
	case getenv(EnvRows) != "":
		if o.Rows, err = ParseRows(getenv(EnvRows)); err != nil {
			return o, fmt.Errorf("invalid value for %s: %w", EnvRows, err)
		}
		o.RowsFromEnv = true
	default:
		o.Rows = DefaultRows
	}
	if o.Repeat < 1 {
		return o, fmt.Errorf("invalid value for --repeat: %d (must be 1 or more)", o.Repeat)
	}
	if o.Only, err = ParseOnly(*only); err != nil {
		return o, err
	}
	if _, err := reg.Lookup(o.Suite); err != nil {
		return o, err
	}
	return o, nil
}

// ParseRows reads a positive row count; commas and underscores may group digits
// (1,000,000 or 1_000_000).
func ParseRows(s string) (int64, error) {
	clean := strings.NewReplacer(",", "", "_", "").Replace(strings.TrimSpace(s))
	n, err := strconv.ParseInt(clean, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a whole number of rows", s)
	}
	if n < 1 {
		return 0, fmt.Errorf("%q: at least 1 row is needed", s)
	}
	return n, nil
}

// ParseOnly splits a comma-separated list of case IDs; empty means every case.
func ParseOnly(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var ids []string
	for _, id := range strings.Split(s, ",") {
		id = strings.TrimSpace(id)
		if id == "" {
			return nil, fmt.Errorf("invalid value for --only: %q has an empty case ID", s)
		}
		ids = append(ids, id)
	}
	return ids, nil
}

// CommandLine is the command that reproduces this run from the module root.
func (o Options) CommandLine() string {
	parts := []string{"go", "run", ProgramPath}
	if o.RowsFromEnv {
		parts = append([]string{EnvRows + "=" + strconv.FormatInt(o.Rows, 10)}, parts...)
	}
	for _, a := range o.Args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Usage is the --help text.
func Usage(reg *Registry) string {
	var b strings.Builder
	fmt.Fprintf(&b, `Usage: go run %s [flags]      (or: task bench -- [flags])

Builds sluice once (tmp/sluice, from the module root), runs each pipeline of a suite as
its own process and prints one row per pipeline:
  pipeline | rows | seconds | rows/s | peak RSS MiB | vs baseline (%%)
rows/s is rows over wall time; peak RSS is the process's ru_maxrss. Every output's row
count is checked, so a broken run shows FAILED instead of a speed (and the exit code is
1). Nothing is asserted about times: the table is for reading, never for CI.

Flags:
  --rows N        rows every pipeline moves (default %s; env %s);
                  1,000,000 and 1_000_000 are accepted
  --suite NAME    suite to run (default %s)
  --only IDS      comma-separated case IDs of the suite to run (default: all); the
                  suite's inputs are still prepared
  --repeat N      run each case N times; seconds is the fastest run, peak RSS the largest
  --markdown      print the table as Markdown (for the README)
  --keep          keep the temp directory (pipelines, inputs and outputs) and print it
  --bin PATH      measure this sluice binary instead of building tmp/sluice

Suites:
`, ProgramPath, Thousands(DefaultRows), EnvRows, reg.defaultSuite())
	for _, s := range reg.suites {
		fmt.Fprintf(&b, "  %s — %s\n", s.Name, s.Description)
		for _, c := range s.Cases {
			fmt.Fprintf(&b, "      %-12s %s\n", c.ID, c.Label)
		}
	}
	fmt.Fprintf(&b, `
Memory check: peak RSS must not grow with the row count (the executor keeps a fixed
number of pages in flight). It is the same command with ten times the rows; compare
the peak RSS column with the default run's:
  go run %s --rows 10000000 --only csv-jsonl,baseline
`, ProgramPath)
	return b.String()
}
