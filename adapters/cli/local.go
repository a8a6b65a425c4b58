package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/secret"
)

// ConfigLoader decodes, resolves and validates a config text (execute.Loader).
type ConfigLoader interface {
	Load(ctx context.Context, text []byte, opts execute.LoadOptions) (*pipeline.Config, error)
}

// Runner executes and probes jobs (execute.Executor).
type Runner interface {
	Run(ctx context.Context, job execute.Job) (execute.Stats, error)
	Probe(ctx context.Context, job execute.Job) error
}

// StateOpener opens the bookmark store a config's state block asks for; dataDir is
// --data-dir. A state type `sluice run` cannot use is a config error
// (errors.Is(err, pipeline.ErrInvalidConfig)).
type StateOpener func(ctx context.Context, st pipeline.State, dataDir string) (execute.StateStore, error)

// Local is what the local commands (run, validate) need from the composition root.
type Local struct {
	Loader ConfigLoader
	// Catalog finds connector specs for the warnings about what a server would refuse
	// (pipeline.RunWarnings); nil leaves those out.
	Catalog   pipeline.Catalog
	Executor  Runner
	OpenState StateOpener
	// Redactor is the process-wide redactor the loader registers secrets with; every line
	// the CLI prints or logs goes through it.
	Redactor *secret.Redactor
	// Now is the logical instant of a run (${now.*}); nil means time.Now.
	Now func() time.Time
	// IsTerminal picks the progress bar over log lines; nil means never a terminal.
	IsTerminal func(io.Writer) bool
	// ProgressEvery is the least time between two progress log lines (default 5 s).
	ProgressEvery time.Duration
	// Tracing starts OpenTelemetry for a run given --otlp-endpoint; nil refuses the flag.
	Tracing TracingStarter
}

// DefaultDataDir is where `sluice run` keeps its state file unless --data-dir says otherwise.
const DefaultDataDir = ".sluice"

func (l Local) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// redact hides registered secrets and the password of any URL in s (SPEC §1.5).
func (l Local) redact(s string) string {
	if l.Redactor != nil {
		return l.Redactor.Redact(s)
	}
	return secret.MaskUserinfo(s)
}

// readConfig reads FILE ("-" is stdin) and returns its text and the directory relative
// paths resolve against.
func readConfig(path string, stdin io.Reader) ([]byte, string, error) {
	if path == "-" {
		text, err := io.ReadAll(stdin)
		if err != nil {
			return nil, "", fmt.Errorf("read config from stdin: %w", err)
		}
		dir, err := os.Getwd()
		return text, dir, err
	}
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, "", fmt.Errorf("read config: %w", err)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, "", err
	}
	return text, filepath.Dir(abs), nil
}

// parseParams turns repeated --param k=v into a map; a malformed one names the flag.
func parseParams(list []string) (map[string]string, error) {
	out := make(map[string]string, len(list))
	for _, kv := range list {
		k, v, ok := strings.Cut(kv, "=")
		if k = strings.TrimSpace(k); !ok || k == "" {
			return nil, Usage(fmt.Errorf("invalid --param %q: want NAME=VALUE", kv))
		}
		out[k] = v
	}
	return out, nil
}

// isConfigError tells a load error that is the config's fault (exit 2) from one that is not.
func isConfigError(err error) bool {
	return errors.Is(err, pipeline.ErrInvalidConfig) || errors.Is(err, execute.ErrDirectiveRefused)
}

// configLines renders a config error as one line per problem, each with its path and
// position, prefixed with the file name the way compilers do.
func configLines(file string, err error) []string {
	es := execute.FieldErrors(err)
	if len(es) == 0 {
		return []string{file + ": " + strings.TrimPrefix(err.Error(), "invalid config: ")}
	}
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = file + ": " + e.String()
	}
	return lines
}

// fieldError is the JSON shape of one config error (validate --json).
type fieldError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
	Line    int    `json:"line,omitempty"`
	Column  int    `json:"column,omitempty"`
}

func fieldErrors(err error, redact func(string) string) []fieldError {
	es := execute.FieldErrors(err)
	if len(es) == 0 {
		return []fieldError{{Message: redact(err.Error())}}
	}
	out := make([]fieldError, len(es))
	for i, e := range es {
		out[i] = fieldError{Path: e.Path, Message: redact(e.Message), Line: e.Pos.Line, Column: e.Pos.Column}
	}
	return out
}
