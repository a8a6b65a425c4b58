package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/spf13/cobra"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/cli"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

var update = flag.Bool("update", false, "rewrite the golden files of testdata/")

// clientRoot is the sluice command tree of every server command, as bootstrap wires it.
func clientRoot(deps cli.RunsDeps) *cobra.Command {
	root := cli.NewRoot(cli.Info{Version: "test"})
	root.AddCommand(cli.NewRunsCommand(deps), cli.NewTemplatesCommand(deps), cli.NewChangeRequestsCommand(deps),
		cli.NewAuditCommand(deps), cli.NewClusterCommand(deps), cli.NewContextCommand(deps),
		cli.NewScheduleCommand(cli.ScheduleDeps{Runs: deps}), cli.NewBackfillCommand(deps),
		cli.NewConnectorsCommand(func() []pipeline.Spec { return []pipeline.Spec{testSpec} }), cli.NewCompletionCommand())
	return root
}

var testSpec = pipeline.Spec{Type: "csvish", Roles: pipeline.RoleBoth, Description: "rows in a file",
	Fields: []pipeline.FieldSpec{{Name: "path", Type: pipeline.FieldString, Required: true, Description: "where the file is"}}}

// execIn runs the full tree with exactly env (no SLUICE_SERVER unless given).
func execIn(t *testing.T, deps cli.RunsDeps, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := cli.Execute(context.Background(), clientRoot(deps), args, cli.Env{
		Lookup: func(k string) (string, bool) { v, ok := env[k]; return v, ok },
		Stdin:  strings.NewReader(""), Stdout: &stdout, Stderr: &stderr,
	})
	return code, stdout.String(), stderr.String()
}

// golden compares got with testdata/name (rewritten with -update).
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	require.Equal(t, string(want), got, name)
}

// A server's settings exported in the shell never narrow a client call (SPEC §14.7):
// SLUICE_POOL=gpu sluice runs list lists every run, and a submit goes to the default pool.
func TestFiltersNeverReadTheEnvironment(t *testing.T) {
	t.Parallel()
	h := newRunsHarness(t)
	serverEnv := map[string]string{"SLUICE_POOL": "gpu", "SLUICE_NAME": "users", "SLUICE_STATUS": "running",
		"SLUICE_LABEL": "env=dev", "SLUICE_RUN_KEY": "day-2", "SLUICE_TENANT": "acme", "SLUICE_LIMIT": "1"}
	code, out, stderr := h.exec(t, serverEnv, "list", "-o", "name")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "r-1\nr-2\nr-3\n", out, "every run is listed")
	f := h.svc.filters[0]
	require.Empty(t, f.Pool)
	require.Empty(t, f.Name)
	require.Empty(t, f.Status)
	require.Empty(t, f.Labels)
	require.Empty(t, f.RunKey)
	require.Equal(t, 50, f.Limit)

	code, _, stderr = h.exec(t, serverEnv, "submit", runsConfigFile(t))
	require.Equal(t, 0, code, stderr)
	require.Empty(t, h.svc.submitted[0].Pool, "the submit goes where the config says, not to $SLUICE_POOL")
	require.Empty(t, h.svc.submitted[0].RunKey)
}

func TestOutputFormatsGolden(t *testing.T) {
	t.Parallel()
	h := newRunsHarness(t)
	for _, format := range []string{"table", "wide", "json", "yaml", "name"} {
		code, out, stderr := h.exec(t, nil, "list", "-o", format)
		require.Equal(t, 0, code, stderr)
		golden(t, "runs-list."+format+".golden", out)
		code, out, stderr = h.exec(t, nil, "get", "r-2", "-o", format)
		require.Equal(t, 0, code, stderr)
		golden(t, "runs-get."+format+".golden", out)
	}
	code, out, _ := h.exec(t, nil, "list", "--json")
	require.Equal(t, 0, code)
	golden(t, "runs-list.json.golden", out) // --json stays an alias of -o json

	code, _, stderr := h.exec(t, nil, "list", "-o", "xml")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, stderr, `invalid value for -o/--output: "xml"`)
	require.Contains(t, stderr, "Run 'sluice runs list --help' for usage.", "the error points to the subcommand's help")
}

func TestConnectorsOffline(t *testing.T) {
	t.Parallel()
	for _, format := range []string{"table", "wide", "json", "yaml", "name"} {
		code, out, stderr := execIn(t, cli.RunsDeps{}, nil, "connectors", "describe", "csvish", "-o", format)
		require.Equal(t, 0, code, stderr)
		golden(t, "connectors-describe."+format+".golden", out)
	}
	code, out, _ := execIn(t, cli.RunsDeps{}, nil, "connectors", "list", "-o", "name")
	require.Equal(t, 0, code)
	require.Equal(t, "csvish\n", out)
	code, _, stderr := execIn(t, cli.RunsDeps{}, nil, "connectors", "describe", "nope")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, stderr, `no connector "nope": this binary has csvish`)
}

func TestCompletionScripts(t *testing.T) {
	t.Parallel()
	for shell, marker := range map[string]string{
		"bash": "complete -o default -F __start_sluice sluice", "zsh": "#compdef sluice",
		"fish": "complete -c sluice", "powershell": "Register-ArgumentCompleter",
	} {
		code, out, stderr := execIn(t, cli.RunsDeps{}, nil, "completion", shell)
		require.Equal(t, 0, code, stderr)
		require.Contains(t, out, marker, shell)
	}
	code, _, _ := execIn(t, cli.RunsDeps{}, nil, "completion", "tcsh")
	require.Equal(t, cli.ExitUsage, code)
}

func TestContexts(t *testing.T) {
	t.Parallel()
	h := newRunsHarness(t)
	cfg := t.TempDir()
	deps := cli.RunsDeps{HTTP: h.srv.Client(), ConfigDir: cfg}
	tokenFile := filepath.Join(t.TempDir(), "token")
	require.NoError(t, os.WriteFile(tokenFile, []byte(runsToken+"\n"), 0o600))
	env := map[string]string{"SLUICE_DATA_DIR": t.TempDir()} // no server.json there

	code, out, stderr := execIn(t, deps, env, "context", "add", "test", "--server", h.srv.URL, "--token-file", tokenFile)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "(current)", "the first context becomes the current one")
	code, _, stderr = execIn(t, deps, env, "context", "add", "dead", "--server", "http://127.0.0.1:1")
	require.Equal(t, 0, code, stderr)

	code, out, stderr = execIn(t, deps, env, "runs", "list", "-o", "name")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "r-1\nr-2\nr-3\n", out, "the current context's server and token file are used")

	code, _, stderr = execIn(t, deps, env, "runs", "list", "--context", "dead")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "the address came from context dead")

	code, out, _ = execIn(t, deps, env, "context", "list")
	require.Equal(t, 0, code)
	require.Regexp(t, `(?m)^\*\s+test\s+`+h.srv.URL, out)
	code, _, _ = execIn(t, deps, env, "context", "use", "dead")
	require.Equal(t, 0, code)
	code, _, _ = execIn(t, deps, env, "runs", "list")
	require.Equal(t, 1, code, "the current context changed")
	code, _, stderr = execIn(t, deps, env, "context", "use", "nope")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, stderr, `no context "nope"`)
	code, _, _ = execIn(t, deps, env, "context", "delete", "dead")
	require.Equal(t, 0, code)
	code, out, _ = execIn(t, deps, env, "context", "list", "-o", "name")
	require.Equal(t, 0, code)
	require.Equal(t, "test\n", out)
	code, _, stderr = execIn(t, deps, env, "runs", "list", "--context", "gone")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, stderr, "invalid value for --context")
}

// A local `sluice serve` is found through the server.json it writes into its data dir.
func TestServerFileDiscovery(t *testing.T) {
	t.Parallel()
	h := newRunsHarness(t)
	_, err := cli.WriteServerFile(h.dataDir, cli.ServerFile{URL: h.srv.URL, PID: 1, InstanceID: "i-1"})
	require.NoError(t, err)
	deps := cli.RunsDeps{HTTP: h.srv.Client(), ConfigDir: t.TempDir()}
	code, out, stderr := execIn(t, deps, nil, "runs", "list", "-o", "name", "--data-dir", h.dataDir)
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "r-1\nr-2\nr-3\n", out)

	require.NoError(t, cli.RemoveServerFile(h.dataDir, 2), "another process's file stays")
	require.FileExists(t, filepath.Join(h.dataDir, cli.ServerFileName))
	require.NoError(t, cli.RemoveServerFile(h.dataDir, 1))
	require.NoFileExists(t, filepath.Join(h.dataDir, cli.ServerFileName))
}

// An unreachable server is explained: where the address came from and what to change.
func TestUnreachableNamesTheKnobs(t *testing.T) {
	t.Parallel()
	dataDir := t.TempDir()
	code, _, stderr := execIn(t, cli.RunsDeps{ConfigDir: t.TempDir()}, map[string]string{"SLUICE_SERVER": "http://127.0.0.1:1",
		"SLUICE_DATA_DIR": dataDir}, "runs", "list")
	require.Equal(t, 1, code)
	require.Contains(t, stderr, "cannot reach the server at http://127.0.0.1:1")
	require.Contains(t, stderr, "the address came from --server")
	require.Contains(t, stderr, "--context NAME")
	require.Contains(t, stderr, "looked at "+filepath.Join(dataDir, cli.ServerFileName)+": not found")
}

func TestRunsWaitExitCodes(t *testing.T) {
	t.Parallel()
	h := newRunsHarness(t)
	h.svc.script = []string{"running"} // never ends
	code, _, stderr := h.exec(t, nil, "submit", runsConfigFile(t))
	require.Equal(t, 0, code, stderr)
	code, _, stderr = h.exec(t, nil, "wait", "r-new", "--timeout", "50ms")
	require.Equal(t, cli.ExitWaitTimeout, code, stderr)
	require.Contains(t, stderr, "continues on the server")

	code, _, stderr = h.exec(t, nil, "wait", "r-new", "--timeout", "-1s")
	require.Equal(t, cli.ExitUsage, code, stderr)
	require.Contains(t, stderr, "--timeout")

	h2 := newRunsHarness(t)
	h2.svc.script = []string{"pending", "running", "completed"}
	code, _, stderr = h2.exec(t, nil, "submit", runsConfigFile(t), "--wait", "--timeout", "10m")
	require.Equal(t, cli.ExitOK, code, stderr)
	require.Equal(t, 600, h2.svc.submitted[0].TimeoutSecs, "--timeout 10m is the run's limit")
	code, _, stderr = h2.exec(t, nil, "submit", runsConfigFile(t), "--timeout-secs", "90")
	require.Equal(t, cli.ExitOK, code, stderr)
	require.Equal(t, 90, h2.svc.submitted[1].TimeoutSecs, "the old flag is a hidden alias")
}

// Ctrl-C stops the wait, not the run, and says so.
func TestRunsWaitInterrupted(t *testing.T) {
	t.Parallel()
	h := newRunsHarness(t)
	h.svc.script = []string{"running"}
	code, _, stderr := h.exec(t, nil, "submit", runsConfigFile(t))
	require.Equal(t, 0, code, stderr)
	seen := make(chan struct{})
	var once sync.Once
	h.svc.onLogs = func() { once.Do(func() { close(seen) }) }
	deps := cli.RunsDeps{HTTP: h.srv.Client(), Interrupt: func(ctx context.Context) (context.Context, context.CancelFunc) {
		ctx, cancel := context.WithCancel(ctx)
		go func() { <-seen; cancel() }() // "Ctrl-C" once the stream is being followed
		return ctx, cancel
	}}
	code, _, stderr = execIn(t, deps, map[string]string{"SLUICE_SERVER": h.srv.URL, "SLUICE_DATA_DIR": h.dataDir},
		"runs", "wait", "r-new")
	require.Equal(t, cli.ExitInterrupted, code, stderr)
	require.Contains(t, stderr, "interrupted: stopped waiting; run r-new continues on the server")
}

func TestTemplateIDIsTheConfigName(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"id":"orders","version":1,"params":[]}`))
	}))
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	file := filepath.Join(dir, "orders.tpl.yaml")
	require.NoError(t, os.WriteFile(file, []byte("version: 1\nname: orders\npipeline: {}\n"), 0o600))
	env := map[string]string{"SLUICE_SERVER": srv.URL, "SLUICE_TOKEN": "t"}
	code, out, stderr := execIn(t, cli.RunsDeps{}, env, "templates", "register", file)
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "registered template orders version 1")
	code, _, stderr = execIn(t, cli.RunsDeps{}, env, "templates", "register", file, "--id", "orders-eu")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, bodies[0], `"id":"orders"`, "not orders.tpl, the file name")
	require.Contains(t, bodies[1], `"id":"orders-eu"`)

	nameless := filepath.Join(dir, "x.yaml")
	require.NoError(t, os.WriteFile(nameless, []byte("version: 1\npipeline: {}\n"), 0o600))
	code, _, stderr = execIn(t, cli.RunsDeps{}, env, "templates", "register", nameless)
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, stderr, "pass --id")
	require.Contains(t, stderr, "Run 'sluice templates register --help' for usage.")
}

// Every command that does something has an example in its help.
func TestEveryCommandHasAnExample(t *testing.T) {
	t.Parallel()
	var missing []string
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Runnable() && !c.Hidden && c.Example == "" {
			missing = append(missing, c.CommandPath())
		}
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(clientRoot(cli.RunsDeps{}))
	require.Empty(t, missing)
}

// A refused directive is explained as what it is: resolved on the server, not here.
func TestDirectiveRefusalSaysItIsResolvedOnTheServer(t *testing.T) {
	t.Parallel()
	h := newRunsHarness(t)
	h.svc.submitErr = fmt.Errorf("pipeline.sink.config.path: ${env:OUT}: %w", execute.ErrDirectiveRefused)
	code, _, stderr := h.exec(t, nil, "submit", runsConfigFile(t))
	require.Equal(t, cli.ExitUsage, code, stderr)
	require.Contains(t, stderr, "directive_refused")
	require.Contains(t, stderr, "resolved on the server "+h.srv.URL)
	require.Contains(t, stderr, "not in this shell")
}

func TestTemplatesFanout(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		body = string(b)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"runs":[{"run_id":"r1","status":"pending"},{"error":{"code":"pool_override_denied","message":"no"}},{"run_id":"r3","status":"pending"}]}`))
	}))
	t.Cleanup(srv.Close)
	env := map[string]string{"SLUICE_SERVER": srv.URL, "SLUICE_TOKEN": "t"}
	code, out, _ := execIn(t, cli.RunsDeps{}, env, "templates", "fanout", "orders", "--param", "day=2026-12-01",
		"--param", "region=eu,us,ap", "-o", "name")
	require.Equal(t, cli.ExitFailure, code, "one refused entry fails the call")
	require.Equal(t, "r1\nr3\n", out)
	require.JSONEq(t, `{"runs":[{"params":{"day":"2026-12-01","region":"eu"}},{"params":{"day":"2026-12-01","region":"us"}},`+
		`{"params":{"day":"2026-12-01","region":"ap"}}]}`, body)
	code, _, stderr := execIn(t, cli.RunsDeps{}, env, "templates", "fanout", "orders", "--param", "a=1,2", "--param", "b=1,2,3")
	require.Equal(t, cli.ExitUsage, code)
	require.Contains(t, stderr, "invalid value for --param b")
}

// Every command that can make a change request instead of a run exits 3 when it did,
// with or without --wait and in every output format: nothing runs until someone approves.
func TestEveryProposingCommandExits3(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusAccepted)
		switch {
		case r.URL.Path == "/v1/backfill":
			_, _ = w.Write([]byte(`{"backfill_id":"bf-1","change_request_id":"cr-bf","status":"proposed"}`))
		case strings.HasSuffix(r.URL.Path, "/fanout"):
			_, _ = w.Write([]byte(`{"runs":[{"change_request_id":"cr-f1","status":"proposed"},{"change_request_id":"cr-f2","status":"proposed"}]}`))
		default: // POST /v1/runs, a template run, a rollback
			_, _ = w.Write([]byte(`{"change_request_id":"cr-1","status":"proposed"}`))
		}
	}))
	t.Cleanup(srv.Close)
	env := map[string]string{"SLUICE_SERVER": srv.URL, "SLUICE_TOKEN": "t"}
	file := runsConfigFile(t)
	for _, args := range [][]string{
		{"runs", "submit", file},
		{"runs", "submit", file, "--wait"},
		{"runs", "submit", file, "-o", "json"},
		{"runs", "rollback", "r-1"},
		{"templates", "run", "orders", "--param", "day=2026-12-01"},
		{"templates", "run", "orders", "--param", "day=2026-12-01", "--wait", "-o", "name"},
		{"templates", "fanout", "orders", "--param", "day=2026-12-01,2026-12-02"},
		{"backfill", "orders", "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-03T00:00:00Z", "--window", "P1D"},
		{"backfill", "orders", "--from", "2026-03-01T00:00:00Z", "--to", "2026-03-03T00:00:00Z", "--window", "P1D", "-o", "json"},
	} {
		code, out, stderr := execIn(t, cli.RunsDeps{}, env, args...)
		require.Equal(t, cli.ExitProposed, code, "%v\n%s%s", args, out, stderr)
		require.Contains(t, out, "cr-", "%v prints the change request", args)
	}
}

// A param the template refuses is the caller's mistake, like a config error: exit 2.
func TestRefusedParamsExit2(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnprocessableEntity)
		_, _ = w.Write([]byte(`{"error":{"code":"invalid_params","message":"params.day: must be at least 2020-01-01 (min)"}}`))
	}))
	t.Cleanup(srv.Close)
	code, _, stderr := execIn(t, cli.RunsDeps{}, map[string]string{"SLUICE_SERVER": srv.URL, "SLUICE_TOKEN": "t"},
		"templates", "run", "orders", "--param", "day=2019-12-31")
	require.Equal(t, cli.ExitUsage, code, stderr)
	require.Contains(t, stderr, "params.day: must be at least 2020-01-01 (min)")
}

// Schedules print in every -o format: names for pipes, and for -o json the REST body of
// GET /v1/schedules (an object holding the list, like every other list), even for one.
func TestScheduleListFormats(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"schedules":[{"id":"s-1","template_id":"orders","cron":"30 2 * * *","timezone":"UTC",` +
			`"paused":false,"overlap_policy":"skip","params":{"day":"2026-12-01"}}]}`))
	}))
	t.Cleanup(srv.Close)
	env := map[string]string{"SLUICE_SERVER": srv.URL, "SLUICE_TOKEN": "t"}
	code, out, stderr := execIn(t, cli.RunsDeps{}, env, "schedule", "list", "-o", "name")
	require.Equal(t, 0, code, stderr)
	require.Equal(t, "s-1\n", out)
	code, out, stderr = execIn(t, cli.RunsDeps{}, env, "schedule", "list", "-o", "json")
	require.Equal(t, 0, code, stderr)
	var body struct {
		Schedules []map[string]any `json:"schedules"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &body), out)
	require.Len(t, body.Schedules, 1, out)
	require.Equal(t, "s-1", body.Schedules[0]["id"])
	code, out, stderr = execIn(t, cli.RunsDeps{}, env, "schedule", "list", "-o", "wide")
	require.Equal(t, 0, code, stderr)
	require.Contains(t, out, "OVERLAP")
}

// On a terminal --wait keeps one progress line (run, elapsed, log lines, the last line)
// and clears it before the outcome; elsewhere it writes no control characters.
func TestWaitProgressLineOnATerminal(t *testing.T) {
	t.Parallel()
	for _, term := range []bool{true, false} {
		h := newRunsHarness(t)
		h.svc.script = []string{"pending", "running", "running", "completed"}
		deps := cli.RunsDeps{HTTP: h.srv.Client(), IsTerminal: func(io.Writer) bool { return term }}
		code, out, stderr := execIn(t, deps, map[string]string{"SLUICE_SERVER": h.srv.URL, "SLUICE_DATA_DIR": h.dataDir},
			"runs", "submit", runsConfigFile(t), "--wait")
		require.Equal(t, 0, code, stderr)
		require.Equal(t, "completed: run r-new: 3 rows read, 3 written, 1 pages, 20ms\n", out)
		if !term {
			require.NotContains(t, stderr, "\x1b[", "no control characters off a terminal")
			continue
		}
		require.Contains(t, stderr, "\r\x1b[Krun r-new · ")
		require.Contains(t, stderr, " · 1 log lines · status pending")
		require.Contains(t, stderr, " · 4 log lines · status completed")
		require.Greater(t, strings.LastIndex(stderr, "\r\x1b[K"), strings.LastIndex(stderr, "log lines"),
			"the line is cleared before the outcome is printed:\n%q", stderr)
	}
}
