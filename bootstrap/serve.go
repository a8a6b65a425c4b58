package bootstrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"go.uber.org/dig"
	"go.uber.org/fx"
	"go.uber.org/fx/fxevent"

	"github.com/sluicehq/sluice/adapters/cli"
	"github.com/sluicehq/sluice/application/cluster"

	// Zones for --timezone come with the binary, not from the host.
	_ "time/tzdata"
)

// Timeouts of the serve process itself.
const (
	// startTimeout bounds connecting, migrating and locking; a first migration of a large
	// history may take a while.
	startTimeout = 5 * time.Minute
	// stopMargin is added to grace + kill for what follows the drain (HTTP, loops,
	// clean-stop record, lock, connections).
	stopMargin = 30 * time.Second
)

// addServe wires `sluice serve`: the HTTP control plane with its run history.
func addServe(root *cobra.Command, p *process) {
	f := &serveFlags{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve the run API: a durable run history, executed by this process",
		Long: "Serve the REST API: runs are submitted over HTTP, stored in the history and\n" +
			"executed here. Without --auth-token, --auth-config or --no-auth a token is generated on\n" +
			"first start into <data-dir>/" + cli.TokenFile + " (mode 0600), where `sluice runs …` finds it.\n" +
			"SIGTERM or SIGINT drains: running runs get --shutdown-grace-secs to finish, then are\n" +
			"handed back as pending; a second signal skips the grace.\n\n" +
			"Submitted configs are confined: their connectors open files only inside an --allow-path\n" +
			"directory (default <data-dir>/" + FilesDirName + ", created at start; relative paths resolve\n" +
			"against the first), never the history, the rest of the data directory, the --auth-config\n" +
			"or any --*-file file, /proc, /sys or /dev; they dial any host but link-local and cloud\n" +
			"metadata addresses, or only --allow-host patterns when given; the history database is never\n" +
			"a target. Refusals are 422 path_refused, host_refused or history_refused at submit, and the\n" +
			"same run error when a connector opens. For a local setup, `sluice serve --allow-path .`.\n\n" +
			"Observability: /metrics for Prometheus, one log line per request with its X-Request-Id, and\n" +
			"OpenTelemetry traces (requests, submit, claim, run attempts with pages as events, finish) when\n" +
			"--otlp-endpoint or OTEL_EXPORTER_OTLP_ENDPOINT names an OTLP/HTTP receiver; a run keeps the\n" +
			"submitter's traceparent, so its spans join that trace on whichever member executes it.",
		Example: `  sluice serve --allow-path .                 # 127.0.0.1:8080, history in ./.sluice/history.db
  sluice serve --mcp --mcp-allow-mutations
  sluice serve --require-approval run --auth-config principals.yaml
  sluice serve --cluster --history postgres://sluice@db:5432/sluice --auth-config principals.yaml \
    --vault-key "$(cat vault.key)" --listen 0.0.0.0:8080 --pool default --pool gpu`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return p.serve(cmd, f) },
	}
	f.register(cmd.Flags())
	root.AddCommand(cli.EnvAll(cmd))
}

func (p *process) serve(cmd *cobra.Command, f *serveFlags) error {
	s, err := f.settings()
	if err != nil {
		return cli.Usage(err)
	}
	stderr := cmd.ErrOrStderr()
	id, err := newIdentity(p.info.Version)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitFailure, Err: err}
	}
	p.redactor.Register(s.Auth.secrets()...)
	p.redactor.Register(s.CallbackSecret)
	p.redactor.Register(historySecrets(s.History)...)
	base, err := newServeLogger(stderr, s.LogLevel, s.Ops.LogFormat, p.redactor)
	if err != nil {
		return cli.Usage(err)
	}
	log := base.With("instance_id", id.InstanceID)

	if err := prepareDataDir(s, log); err != nil {
		return &cli.ExitError{Code: cli.ExitFailure, Err: errors.New(p.redactor.Redact(err.Error()))}
	}
	p.redactor.Register(s.Auth.Token) // a generated one is known only now
	defer startGCFloor(s.Ops.GCFloorMiB, log).Stop()
	if s.Auth.Disabled {
		log.Warn("authentication is disabled (--no-auth): every caller is admin")
	}

	// Bound before anything else starts, so the member row and the runs it claims carry
	// the address actually bound (--listen with port 0 picks a free one).
	ln, err := (&net.ListenConfig{}).Listen(cmd.Context(), "tcp", s.Listen)
	if err != nil {
		return &cli.ExitError{Code: cli.ExitFailure, Err: fmt.Errorf("--listen %s: %w", s.Listen, err)}
	}
	defer ln.Close() // closed by the HTTP shutdown already, unless the start failed
	s.Listen = ln.Addr().String()

	fail := make(fatal, 1)
	var member *cluster.Member
	app := fx.New(
		serveGraph(s, p, log, memberLog{base}, id, apiListener{ln}, fail),
		fx.Populate(&member),
		fx.WithLogger(func() fxevent.Logger { return fxLogger(log) }),
	)
	if err := app.Err(); err != nil {
		return p.startFailure(err)
	}
	// The listener is bound, so a client that finds the file connects (and waits in the
	// backlog while the graph starts) rather than being refused.
	announce(s.DataDir, cli.ServerFile{URL: cli.LocalURL(s.Listen), PID: os.Getpid(), InstanceID: id.InstanceID}, log)
	defer func() {
		if err := cli.RemoveServerFile(s.DataDir, os.Getpid()); err != nil {
			log.Warn("could not remove the server file", "error", err.Error())
		}
	}()
	return p.runApp(cmd.Context(), app, member, s, log, fail)
}

// announce writes <data-dir>/server.json for the CLI on this machine (SPEC §14.7). A
// data directory that cannot be written is not a reason to refuse serving.
func announce(dataDir string, sf cli.ServerFile, log *slog.Logger) {
	path, err := cli.WriteServerFile(dataDir, sf)
	if err != nil {
		log.Warn("local clients will need --server: could not write the server file", "error", err.Error())
		return
	}
	log.Info("wrote the server file for local clients", "path", path, "url", sf.URL)
}

// runApp starts the graph, waits for a signal (or ctx, or a fatal error) and shuts down.
func (p *process) runApp(ctx context.Context, app *fx.App, member *cluster.Member, s *serveSettings,
	log *slog.Logger, fail fatal,
) error {
	interrupts, stopSignals := watchInterrupts(ctx)
	defer stopSignals()

	startCtx, cancelStart := context.WithTimeout(context.Background(), startTimeout)
	defer cancelStart()
	started := make(chan error, 1)
	go func() { started <- app.Start(startCtx) }()
	select {
	case err := <-started:
		if err != nil {
			return p.startFailure(err)
		}
		// The API listens before the last start hooks ran; this line says all of them did,
		// so a supervisor (or a test) that stops the server after it gets a clean shutdown
		// rather than "interrupted while starting".
		log.Info("serve started")
	case <-interrupts:
		cancelStart()
		if err := <-started; err != nil {
			return &cli.ExitError{Code: cli.ExitFailure, Err: errors.New("interrupted while starting")}
		}
		log.Info("interrupted while starting; shutting down")
		return p.stop(app, member, s, log, interrupts, nil)
	}

	var runErr error
	select {
	case <-interrupts:
		log.Info("signal received; shutting down")
	case runErr = <-fail:
		log.Error("stopping after a fatal error", "error", runErr.Error())
	}
	return p.stop(app, member, s, log, interrupts, runErr)
}

// stop runs the stop hooks (drain first). A further interrupt meanwhile skips what is
// left of the grace (SPEC §2.8).
func (p *process) stop(app *fx.App, member *cluster.Member, s *serveSettings, log *slog.Logger,
	interrupts <-chan struct{}, runErr error,
) error {
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-interrupts:
				log.Info("second signal: skipping the rest of the shutdown grace")
				go func() { _ = member.Drain(context.Background()) }()
			case <-done:
				return
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), s.Grace+s.Kill+stopMargin)
	defer cancel()
	stopErr := app.Stop(ctx)
	if runErr != nil {
		return &cli.ExitError{Code: cli.ExitFailure, Err: errors.New(p.redactor.Redact(runErr.Error()))}
	}
	if stopErr != nil {
		return &cli.ExitError{Code: cli.ExitFailure, Err: fmt.Errorf("shutdown: %s", p.redactor.Redact(stopErr.Error()))}
	}
	log.Info("sluice serve stopped")
	return nil
}

// startFailure turns a failed build or start into exit 1 with the cause alone: fx's
// wrapping names functions of this package, which tells an operator nothing.
func (p *process) startFailure(err error) error {
	cause := dig.RootCause(err)
	return &cli.ExitError{Code: cli.ExitFailure, Err: errors.New(p.redactor.Redact(cause.Error()))}
}

// watchInterrupts turns SIGINT, SIGTERM and the end of ctx (a caller stopping an
// in-process server) into interrupts, one per event.
func watchInterrupts(ctx context.Context) (<-chan struct{}, func()) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	out := make(chan struct{}, 4)
	quit := make(chan struct{})
	go func() {
		ctxDone := ctx.Done()
		for {
			select {
			case <-sigs:
			case <-ctxDone:
				ctxDone = nil // once is enough: a done context stays done
			case <-quit:
				return
			}
			select {
			case out <- struct{}{}:
			default:
			}
		}
	}()
	return out, func() {
		signal.Stop(sigs)
		close(quit)
	}
}

func newIdentity(version string) (identity, error) {
	u, err := uuid.NewV7()
	if err != nil {
		return identity{}, fmt.Errorf("instance id: %w", err)
	}
	host, err := os.Hostname()
	if err != nil {
		host = "unknown"
	}
	return identity{InstanceID: u.String(), Host: host, PID: os.Getpid(), Version: version}, nil
}

// prepareDataDir creates the data directory when serve keeps something there (the
// default history, a generated token) and makes sure the generated token exists,
// logging where it is — never the token itself — as a line like every other, so a log
// collector parses it.
func prepareDataDir(s *serveSettings, log *slog.Logger) error {
	if !s.DefaultHistory && !s.Auth.Generate {
		return nil
	}
	if err := os.MkdirAll(s.DataDir, 0o700); err != nil {
		return fmt.Errorf("--data-dir: %w", err)
	}
	if !s.Auth.Generate {
		return nil
	}
	path, token, created, err := ensureToken(s.DataDir)
	if err != nil {
		return err
	}
	s.Auth.Token, s.Auth.TokenFile = token, path
	msg := "using the API token in its file; `sluice runs …` reads it with --data-dir"
	if created {
		msg = "generated an API token into its file (mode 0600); `sluice runs …` reads it with --data-dir"
	}
	log.Info(msg, "token_file", path, "data_dir", s.DataDir)
	return nil
}

// historySecrets are the credentials inside a history URL, registered with the process
// redactor so no log line or message shows them.
func historySecrets(raw string) []string {
	u, err := url.Parse(raw)
	if err != nil {
		if _, rest, ok := strings.Cut(raw, "password="); ok {
			pw, _, _ := strings.Cut(rest, "&")
			return []string{pw}
		}
		return nil
	}
	var out []string
	if pw, ok := u.User.Password(); ok {
		out = append(out, pw)
	}
	if pw := u.Query().Get("password"); pw != "" {
		out = append(out, pw)
	}
	return out
}
