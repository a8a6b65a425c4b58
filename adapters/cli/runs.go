package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sluicehq/sluice/adapters/cli/client"
)

// TokenFile is the file in the data directory where `sluice serve` stores the token it
// generates on first start, and where `sluice runs …` looks when no --token is given.
const TokenFile = "auth-token"

// DefaultServer is the address `sluice runs …` talks to unless --server says otherwise:
// the default listen address of `sluice serve`.
const DefaultServer = "http://127.0.0.1:8080"

// RunsDeps is what the `runs` commands need from the composition root; zero values work.
type RunsDeps struct {
	// HTTP is the client for API calls; nil uses http.DefaultClient. It must not carry a
	// Timeout, which would cut `logs -f` streams.
	HTTP *http.Client
	// ConfigDir holds the contexts file (see ConfigDir); "" means no contexts.
	ConfigDir string
	// Interrupt derives the context a wait ends with on Ctrl-C; nil listens for SIGINT.
	Interrupt func(context.Context) (context.Context, context.CancelFunc)
	// IsTerminal says whether stderr is a terminal (where a wait keeps a progress line);
	// nil asks the OS.
	IsTerminal func(io.Writer) bool
}

// runsFlags are the global flags as a server command sees them, filled by client().
type runsFlags struct {
	server  string
	token   string
	dataDir string
	context string
	output  string
	json    bool
	conn    connection
	deps    RunsDeps
}

// NewRunsCommand is `sluice runs …`: the API client commands (SPEC §2.11).
func NewRunsCommand(deps RunsDeps) *cobra.Command {
	f := &runsFlags{deps: deps}
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "Submit, list, inspect, follow and cancel runs on a sluice server",
		Long: "Talk to a running `sluice serve` over its REST API. The server comes from --server, else\n" +
			"--context (or the current context), else the " + ServerFileName + " a local serve wrote into --data-dir.\n" +
			"The token comes from --token, else the context's token file, else " + TokenFile + " in --data-dir.",
		Example: `  sluice runs submit orders.yaml --wait
  sluice runs list --status failed -o name | xargs -n1 sluice runs rollback
  sluice runs logs 01J9Z3K6V4N8Q2R5T7W9Y1B3D5 -f`,
	}
	cmd.AddCommand(newRunsSubmit(f), newRunsList(f), newRunsGet(f), newRunsCancel(f), newRunsLogs(f), newRunsDelete(f),
		newRunsWait(f), newRunsRollback(f), newRunsShards(f), newRunsConfig(f))
	return cmd
}

// apiError prints a failed call and returns its exit error: 2 when the request itself was
// refused as invalid (like a config error of `sluice run`), 1 otherwise.
func (f *runsFlags) apiError(cmd *cobra.Command, what string, err error) error {
	stderr := cmd.ErrOrStderr()
	var ee *ExitError
	if errors.As(err, &ee) {
		return err
	}
	var ae *client.Error
	if !errors.As(err, &ae) {
		fmt.Fprintf(stderr, "error: %s: %v\n", what, err)
		if errors.Is(err, client.ErrUnreachable) {
			fmt.Fprintln(stderr, f.unreachableHint())
		}
		return &ExitError{Code: ExitFailure, Err: err, Printed: true}
	}
	fmt.Fprintf(stderr, "error: %s: %s\n", what, ae.Error())
	for _, fe := range ae.FieldErrors() {
		loc := ""
		if fe.Line > 0 {
			loc = fmt.Sprintf(" (line %d, column %d)", fe.Line, fe.Column)
		}
		if fe.Path != "" {
			fmt.Fprintf(stderr, "error: %s: %s%s\n", fe.Path, fe.Message, loc)
		} else {
			fmt.Fprintf(stderr, "error: %s%s\n", fe.Message, loc)
		}
	}
	switch ae.Code {
	case "directive_refused", "path_refused", "host_refused":
		fmt.Fprintf(stderr, "note: the config is resolved on the server %s: relative paths, ${env:…} and ${file:…} are read "+
			"in the server's directory and environment, not in this shell\n", f.conn.url)
	}
	if ae.Code == "unauthorized" {
		fmt.Fprintf(stderr, "hint: pass --token (or set SLUICE_TOKEN), add a context with its --token-file, or point --data-dir at the server's data directory\n")
	}
	code := ExitFailure
	switch ae.Code {
	case "invalid_body", "invalid_config", "invalid_params", "directive_refused", "pool_unserved", "pool_override_denied",
		"vault_key_required", "secret_params_refused", "secret_param_misplaced", "shard_refused", "state_format_refused",
		"path_refused", "host_refused", "history_refused":
		code = ExitUsage
	}
	return &ExitError{Code: code, Err: err, Printed: true}
}

func newRunsSubmit(f *runsFlags) *cobra.Command {
	var (
		name, pool, idemKey, runKey string
		labels                      []string
		timeout                     durationFlag
		w                           waitFlags
	)
	cmd := &cobra.Command{
		Use:   "submit FILE",
		Short: "Submit a pipeline config as a new run",
		Long: "Submit FILE (- for stdin) to the server. The config is resolved on the server: relative\n" +
			"paths, ${env:…} and ${file:…} are read in the server's directory and environment, not here.\n" +
			"With --wait, follow the run's log stream until it ends; see `sluice runs wait --help` for exit codes.",
		Example: `  sluice runs submit orders.yaml
  sluice runs submit orders.yaml --wait --timeout 10m --label team=data
  cat orders.yaml | sluice runs submit - --run-key 2026-03-01 -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			lbl, err := parseLabelFlags(labels)
			if err != nil {
				return err
			}
			c, err := f.client(cmd)
			if err != nil {
				return err
			}
			text, _, err := readConfig(args[0], cmd.InOrStdin())
			if err != nil {
				return Usage(err)
			}
			res, err := c.Submit(cmd.Context(), client.SubmitRequest{Config: string(text), Name: name, Pool: pool,
				Labels: lbl, IdempotencyKey: idemKey, RunKey: runKey, TimeoutSecs: timeout.seconds()})
			if err != nil {
				return f.apiError(cmd, "submit "+args[0], err)
			}
			return f.afterSubmit(cmd, c, res, w)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&name, "name", "", "run name (overrides the config's pipeline name)")
	fl.StringVar(&pool, "pool", "", "pool to execute the run in")
	fl.StringArrayVar(&labels, "label", nil, "label KEY=VALUE (repeatable)")
	fl.StringVar(&idemKey, "idempotency-key", "", "resubmitting with the same key answers the first run")
	fl.StringVar(&runKey, "run-key", "", "unique per pipeline: a second submit answers the existing run")
	timeout.register(fl, "timeout", "timeout-secs", "fail the run after it has run this long, e.g. 10m (0 = no limit)")
	w.register(fl)
	return cmd
}

func submittedLine(res client.SubmitResponse) string {
	if res.ChangeRequestID != "" {
		return fmt.Sprintf("proposed change request %s: it runs once another operator approves it "+
			"(see `sluice change-requests get %s`)", res.ChangeRequestID, res.ChangeRequestID)
	}
	if res.Replayed {
		return fmt.Sprintf("run %s already exists (%s)", res.RunID, res.Status)
	}
	return fmt.Sprintf("submitted run %s (%s)", res.RunID, res.Status)
}

func (f *runsFlags) printSubmitted(w io.Writer, res client.SubmitResponse) error {
	switch f.output {
	case OutputJSON, OutputYAML:
		return f.encode(w, res)
	case OutputName:
		name := res.RunID
		if name == "" {
			name = res.ChangeRequestID
		}
		_, err := fmt.Fprintln(w, name)
		return err
	}
	_, err := fmt.Fprintln(w, submittedLine(res))
	return err
}

// finished reports a terminal run: 0 when it completed, 1 otherwise.
func (f *runsFlags) finished(cmd *cobra.Command, r client.RunResource) error {
	out, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	switch f.output {
	case OutputJSON, OutputYAML:
		if err := f.encode(out, r); err != nil {
			return err
		}
	case OutputName:
		fmt.Fprintln(out, r.RunID)
	default:
		line := fmt.Sprintf("%s: run %s: %s", r.Status, r.RunID, statsLine(r.Stats))
		if r.Error != nil {
			line = fmt.Sprintf("%s: run %s: %s [%s; %s]", r.Status, r.RunID, r.Error.Message, r.Error.Code, statsLine(r.Stats))
		}
		w := out
		if r.Status != statusCompleted {
			w = stderr
		}
		fmt.Fprintln(w, line)
	}
	if r.Status == statusCompleted {
		return nil
	}
	return &ExitError{Code: ExitFailure, Err: fmt.Errorf("run %s %s", r.RunID, r.Status), Printed: true}
}

func statsLine(s client.Stats) string {
	return fmt.Sprintf("%d rows read, %d written, %d pages, %s", s.RowsRead, s.RowsWritten, s.Pages,
		humanDuration(time.Duration(s.ElapsedMS)*time.Millisecond))
}

// parseLabelFlags turns repeated --label k=v into a map; a malformed one names the flag.
func parseLabelFlags(list []string) (map[string]string, error) {
	if len(list) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(list))
	for _, kv := range list {
		k, v, ok := strings.Cut(kv, "=")
		if k = strings.TrimSpace(k); !ok || k == "" {
			return nil, Usage(fmt.Errorf("invalid --label %q: want KEY=VALUE", kv))
		}
		out[k] = v
	}
	return out, nil
}
