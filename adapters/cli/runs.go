package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
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
	// PollInterval is how often `submit --wait` asks for the run's status (default 1 s).
	PollInterval time.Duration
}

// runsFlags are the flags every `runs` subcommand shares.
type runsFlags struct {
	server  string
	token   string
	dataDir string
	json    bool
	deps    RunsDeps
}

// NewRunsCommand is `sluice runs …`: the API client commands (SPEC §2.11).
func NewRunsCommand(deps RunsDeps) *cobra.Command {
	if deps.PollInterval <= 0 {
		deps.PollInterval = time.Second
	}
	f := &runsFlags{deps: deps}
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "Submit, list, inspect, follow and cancel runs on a sluice server",
		Long: "Talk to a running `sluice serve` over its REST API. The token comes from --token,\n" +
			"else from the file " + TokenFile + " in --data-dir that serve writes on first start.",
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.server, "server", DefaultServer, "base URL of the sluice server")
	pf.StringVar(&f.token, "token", "", "API bearer token (default: the "+TokenFile+" file in --data-dir)")
	pf.StringVar(&f.dataDir, "data-dir", DefaultDataDir, "data directory of the local server, read for its "+TokenFile+" file")
	pf.BoolVar(&f.json, "json", false, "print JSON instead of tables")
	cmd.AddCommand(newRunsSubmit(f), newRunsList(f), newRunsGet(f), newRunsCancel(f), newRunsLogs(f), newRunsDelete(f))
	return cmd
}

// client builds the API client from the shared flags.
func (f *runsFlags) client() (*client.Client, error) {
	u, err := url.Parse(f.server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, Usage(fmt.Errorf("invalid value for --server: %q is not a URL like %s", f.server, DefaultServer))
	}
	token := strings.TrimSpace(f.token)
	if token == "" && f.dataDir != "" {
		path := filepath.Join(f.dataDir, TokenFile)
		b, err := os.ReadFile(path)
		switch {
		case err == nil:
			token = strings.TrimSpace(string(b))
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("read the token file %s (or pass --token): %w", path, err)
		}
	}
	return &client.Client{BaseURL: f.server, Token: token, HTTP: f.deps.HTTP}, nil
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
	if ae.Code == "unauthorized" {
		fmt.Fprintf(stderr, "hint: pass --token (or set SLUICE_TOKEN), or point --data-dir at the server's data directory\n")
	}
	code := ExitFailure
	switch ae.Code {
	case "invalid_body", "invalid_config", "directive_refused", "pool_unserved", "pool_override_denied",
		"vault_key_required", "secret_params_refused", "shard_refused", "state_format_refused",
		"path_refused", "host_refused", "history_refused":
		code = ExitUsage
	}
	return &ExitError{Code: code, Err: err, Printed: true}
}

func newRunsSubmit(f *runsFlags) *cobra.Command {
	var (
		name, pool, idemKey, runKey string
		labels                      []string
		timeoutSecs                 int
		wait                        bool
	)
	cmd := &cobra.Command{
		Use:   "submit FILE",
		Short: "Submit a pipeline config as a new run",
		Long: "Submit FILE (- for stdin) to the server. With --wait, follow the run until it ends and\n" +
			"exit 0 when it completed, 1 when it failed or was cancelled (2 when the config is refused).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			lbl, err := parseLabelFlags(labels)
			if err != nil {
				return err
			}
			if timeoutSecs < 0 {
				return Usage(fmt.Errorf("invalid value for --timeout-secs: %d is negative", timeoutSecs))
			}
			c, err := f.client()
			if err != nil {
				return err
			}
			text, _, err := readConfig(args[0], cmd.InOrStdin())
			if err != nil {
				return Usage(err)
			}
			res, err := c.Submit(cmd.Context(), client.SubmitRequest{Config: string(text), Name: name, Pool: pool,
				Labels: lbl, IdempotencyKey: idemKey, RunKey: runKey, TimeoutSecs: timeoutSecs})
			if err != nil {
				return f.apiError(cmd, "submit "+args[0], err)
			}
			if !wait || res.ChangeRequestID != "" {
				// A change request has no run to wait for yet.
				return f.printSubmitted(cmd.OutOrStdout(), res)
			}
			if !f.json {
				fmt.Fprintf(cmd.ErrOrStderr(), "%s; waiting for it to end\n", submittedLine(res))
			}
			return f.wait(cmd, c, res.RunID)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&name, "name", "", "run name (overrides the config's pipeline name)")
	fl.StringVar(&pool, "pool", "", "pool to execute the run in")
	fl.StringArrayVar(&labels, "label", nil, "label KEY=VALUE (repeatable)")
	fl.StringVar(&idemKey, "idempotency-key", "", "resubmitting with the same key answers the first run")
	fl.StringVar(&runKey, "run-key", "", "unique per pipeline: a second submit answers the existing run")
	fl.IntVar(&timeoutSecs, "timeout-secs", 0, "fail the run after this many seconds of running (0 = no limit)")
	fl.BoolVar(&wait, "wait", false, "wait until the run ends; the exit code tells how it ended")
	return cmd
}

func submittedLine(res client.SubmitResponse) string {
	if res.ChangeRequestID != "" {
		return fmt.Sprintf("proposed change request %s: it runs once another operator approves it", res.ChangeRequestID)
	}
	if res.Replayed {
		return fmt.Sprintf("run %s already exists (%s)", res.RunID, res.Status)
	}
	return fmt.Sprintf("submitted run %s (%s)", res.RunID, res.Status)
}

func (f *runsFlags) printSubmitted(w io.Writer, res client.SubmitResponse) error {
	if f.json {
		return writeJSON(w, res)
	}
	_, err := fmt.Fprintln(w, submittedLine(res))
	return err
}

// wait polls the run until it is terminal and exits like `sluice run`.
func (f *runsFlags) wait(cmd *cobra.Command, c *client.Client, id string) error {
	ctx := cmd.Context()
	for {
		r, err := c.Get(ctx, id)
		if err != nil {
			if errors.Is(err, context.Canceled) {
				fmt.Fprintf(cmd.ErrOrStderr(), "stopped waiting; run %s goes on on the server\n", id)
				return &ExitError{Code: ExitFailure, Err: err, Printed: true}
			}
			return f.apiError(cmd, "wait for run "+id, err)
		}
		if r.Terminal() {
			return f.finished(cmd, r)
		}
		t := time.NewTimer(f.deps.PollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			fmt.Fprintf(cmd.ErrOrStderr(), "stopped waiting; run %s goes on on the server\n", id)
			return &ExitError{Code: ExitFailure, Err: ctx.Err(), Printed: true}
		case <-t.C:
		}
	}
}

// finished reports a terminal run: 0 when it completed, 1 otherwise.
func (f *runsFlags) finished(cmd *cobra.Command, r client.RunResource) error {
	out, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if f.json {
		if err := writeJSON(out, r); err != nil {
			return err
		}
	} else {
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
