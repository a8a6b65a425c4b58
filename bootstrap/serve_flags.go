package bootstrap

import (
	"errors"
	"fmt"
	"github.com/sluicehq/sluice/adapters/vault"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/adapters/cli"
	"github.com/sluicehq/sluice/domain/callback"
	"github.com/sluicehq/sluice/domain/lease"
	"github.com/sluicehq/sluice/domain/pool"
	"github.com/sluicehq/sluice/domain/secret"
)

// Defaults of `sluice serve` (SPEC §2.1, §2.7, §4).
const (
	DefaultListen          = "127.0.0.1:8080"
	DefaultMaxQueued       = 10000
	DefaultBodyLimit       = 1 << 20
	DefaultShutdownGrace   = 60
	DefaultShutdownKill    = 10
	DefaultRetainTerminal  = 7 * 24 * 3600
	DefaultIdemRetention   = 24 * 3600
	DefaultRetainAudit     = 365 * 24 * 3600
	DefaultLeaseTTL        = 30
	DefaultPollSecs        = 2
	DefaultClusterAttempts = 3
	DefaultLeaderTTL       = 30
	// HistoryFileName is the default SQLite history inside --data-dir.
	HistoryFileName = "history.db"
	// minLeaseTTL keeps TTL/3 renewals and TTL/6 statement timeouts at a sane size; the
	// scheduler leader's TTL has the same floor.
	minLeaseTTL = int(lease.MinTTL / time.Second)
)

// serveFlags are the raw flag values of `sluice serve`, as cobra parsed them.
type serveFlags struct {
	listen, dataDir, history      string
	noMigrate                     bool
	authToken, authConfig         string
	noAuth                        bool
	maxConcurrent, maxQueued      int
	bodyLimit                     int64
	graceSecs, killSecs           int
	retainSecs, idemSecs          int
	retainAuditSecs               int
	callbackSecret                string
	callbackAllowHosts, fileDirs  []string
	timezone                      string
	pools                         []string
	leaseTTLSecs, pollSecs, tries int
	leaderTTLSecs                 int
	logLevel                      string
	cluster, pollOnly             bool
	poolWaitSecs                  int
	vault                         vaultFlags
	mcp                           mcpFlags
	requireApproval               string
	confine                       confineFlags
	timeouts                      timeoutFlags
	ops                           opsFlags
	ui                            bool
}

func (f *serveFlags) register(fs *pflag.FlagSet) {
	fs.StringVar(&f.listen, "listen", DefaultListen, "address the HTTP API listens on (host:port)")
	fs.StringVar(&f.dataDir, "data-dir", cli.DefaultDataDir, "directory of the default history and the generated "+cli.TokenFile+" file")
	fs.StringVar(&f.history, "history", "", "run history: memory, sqlite:PATH, sqlite://PATH, postgres://… or postgresql://… (default sqlite:<data-dir>/"+HistoryFileName+")")
	fs.BoolVar(&f.noMigrate, "no-migrate", false, "do not apply migrations at start; refuse a history that lacks them")
	fs.StringVar(&f.authToken, "auth-token", "", "bearer token of the single admin principal (default: none; without --auth-config or --no-auth a token is generated into <data-dir>/"+cli.TokenFile+")")
	fs.StringVar(&f.authConfig, "auth-config", "", "YAML or JSON file listing principals {name, token, role: viewer|operator|admin, tenant?} (default: none)")
	fs.BoolVar(&f.noAuth, "no-auth", false, "serve the API without authentication: every caller is admin")
	fs.IntVar(&f.maxConcurrent, "max-concurrent-runs", runtime.NumCPU(), "runs executing at once on this server (slots); the default is the number of CPUs, and a member of many short runs wants far more: a run waiting on the history holds a slot, not a core")
	fs.IntVar(&f.maxQueued, "max-queued-runs", DefaultMaxQueued, "pending + queued runs accepted before submissions get 429 (0 = no limit)")
	fs.Int64Var(&f.bodyLimit, "body-limit-bytes", DefaultBodyLimit, "largest request body accepted (413 past it)")
	fs.IntVar(&f.graceSecs, "shutdown-grace-secs", DefaultShutdownGrace, "on SIGTERM/SIGINT, how long running runs may finish before they are handed back (0 allowed)")
	fs.IntVar(&f.killSecs, "shutdown-kill-secs", DefaultShutdownKill, "after the grace, how long to wait for runs to stop before abandoning them")
	fs.IntVar(&f.retainSecs, "retain-terminal-runs-secs", DefaultRetainTerminal, "terminal runs older than this are purged with their logs, and schedule ticks but the newest of each schedule")
	fs.IntVar(&f.idemSecs, "idempotency-retention-secs", DefaultIdemRetention, "how long idempotency keys are kept")
	fs.IntVar(&f.retainAuditSecs, "retain-audit-secs", DefaultRetainAudit, "audit entries and ended scheduler leader terms older than this are purged (the newest term stays)")
	fs.StringVar(&f.callbackSecret, "callback-secret", "", "HMAC key signing completion callbacks: X-Sluice-Signature is sha256=HMAC(key, TIMESTAMP.DELIVERY.BODY) of the X-Sluice-Timestamp and X-Sluice-Delivery headers (default: none, unsigned)")
	fs.StringSliceVar(&f.callbackAllowHosts, "callback-allow-host", nil, "host, address or CIDR that callbacks may reach despite the metadata/link-local block; connectors follow --allow-host, where the block always holds (repeatable; default: none)")
	fs.StringSliceVar(&f.fileDirs, "allow-file-dir", nil, "directory ${file:} directives of submitted configs may read (repeatable; default none)")
	fs.StringVar(&f.timezone, "timezone", "UTC", "IANA zone of run_date, e.g. Europe/Berlin")
	fs.StringSliceVar(&f.pools, "pool", []string{pool.Default}, "execution pool this server serves (repeatable) [$SLUICE_POOL or $SLUICE_SERVE_POOLS]")
	fs.IntVar(&f.leaseTTLSecs, "lease-ttl-secs", DefaultLeaseTTL, "lease of a running run; renewed every third of it (at least 3)")
	fs.IntVar(&f.pollSecs, "cluster-poll-secs", DefaultPollSecs, "claim and cancel polling interval (less than --lease-ttl-secs)")
	fs.IntVar(&f.leaderTTLSecs, "leader-ttl-secs", DefaultLeaderTTL, "with --cluster: a scheduler leader whose heartbeat (every 5 s) is older than this is replaced (at least 3)")
	fs.IntVar(&f.tries, "cluster-max-attempts", DefaultClusterAttempts, "claims of a run before an expired lease fails it as poisoned (at least 1)")
	fs.StringVar(&f.logLevel, "log-level", "info", "least level of log lines: debug, info, warn or error")
	f.registerCluster(fs)
	f.vault.register(fs)
	f.mcp.register(fs)
	f.timeouts.register(fs)
	registerApproval(fs, &f.requireApproval)
	f.confine.register(fs)
	f.ops.register(fs)
	registerUI(fs, &f.ui)
	_ = fs.SetAnnotation("pool", cli.AnnotationEnvAlias, []string{"SLUICE_SERVE_POOLS"})
}

// serveSettings are the validated settings the graph is built from.
type serveSettings struct {
	Listen         string
	DataDir        string // absolute
	History        string
	DefaultHistory bool // History was derived from DataDir
	NoMigrate      bool
	Auth           authChoice
	MaxConcurrent  int
	MaxQueued      int
	BodyLimit      int64
	Grace, Kill    time.Duration
	RetainTerminal time.Duration
	IdemRetention  time.Duration
	RetainAudit    time.Duration // --retain-audit-secs
	CallbackSecret string
	CallbackAllow  []string
	FileDirs       []string
	Zone           *time.Location
	Pools          []string
	LeaseTTL       time.Duration
	LeaderTTL      time.Duration // --leader-ttl-secs (SPEC §9.3)
	Poll           time.Duration
	MaxAttempts    int
	LogLevel       slog.Level
	// Cluster is --cluster: members share the history (SPEC §4). PollOnly is --poll-only,
	// PoolWait --pool-wait-timeout-secs (0 = wait forever).
	Cluster  bool
	PollOnly bool
	PoolWait time.Duration
	// Vault is --vault-key with --vault-previous-key; nil without a key (SPEC §7).
	Vault *vault.Vault
	// MCP is --mcp and --mcp-allow-mutations (SPEC §11).
	MCP mcpSettings
	// RequireApproval is --require-approval run (SPEC §9.5).
	RequireApproval bool
	// Confine is --allow-path, --allow-host and the files no connector may open (§14.1).
	Confine confineSettings
	// Timeouts are --read-timeout-secs, --idle-timeout-secs, --query-timeout-secs (§14.3).
	Timeouts timeouts
	// Ops are the operability settings (SPEC §14.6).
	Ops opsSettings
	// UI is --ui: the web console at /ui/ (SPEC §14.8).
	UI bool
}

// settings validates every flag and reports all bad values at once, each naming its
// flag; the caller exits 2.
func (f *serveFlags) settings() (*serveSettings, error) {
	s := &serveSettings{
		Listen: f.listen, NoMigrate: f.noMigrate, MaxConcurrent: f.maxConcurrent, MaxQueued: f.maxQueued,
		BodyLimit: f.bodyLimit, CallbackSecret: f.callbackSecret, MaxAttempts: f.tries,
		Grace: secs(f.graceSecs), Kill: secs(f.killSecs), RetainTerminal: secs(f.retainSecs),
		IdemRetention: secs(f.idemSecs), RetainAudit: secs(f.retainAuditSecs), LeaseTTL: secs(f.leaseTTLSecs), Poll: secs(f.pollSecs),
		LeaderTTL: secs(f.leaderTTLSecs),
		Cluster:   f.cluster, PollOnly: f.pollOnly, PoolWait: secs(f.poolWaitSecs),
		UI: f.ui,
	}
	var errs []error
	bad := func(flag, format string, a ...any) {
		errs = append(errs, fmt.Errorf("invalid value for --%s: %s", flag, fmt.Sprintf(format, a...)))
	}
	if err := checkListen(f.listen); err != nil {
		bad("listen", "%v", err)
	}
	if strings.TrimSpace(f.dataDir) == "" {
		bad("data-dir", "empty")
	} else if abs, err := filepath.Abs(f.dataDir); err != nil {
		bad("data-dir", "%v", err)
	} else {
		s.DataDir = abs
	}
	s.History = strings.TrimSpace(f.history)
	if s.History == "" {
		s.History, s.DefaultHistory = "sqlite:"+filepath.Join(s.DataDir, HistoryFileName), true
	} else if err := checkHistoryURL(s.History); err != nil {
		bad("history", "%v", err)
	}
	if v, err := f.vault.open(); err != nil {
		errs = append(errs, fmt.Errorf("invalid value for %w", err))
	} else {
		s.Vault = v
	}
	if f.maxConcurrent < 1 {
		bad("max-concurrent-runs", "%d: at least 1 run must be allowed", f.maxConcurrent)
	}
	if f.maxQueued < 0 {
		bad("max-queued-runs", "%d is negative (0 means no limit)", f.maxQueued)
	}
	if f.bodyLimit < 1 {
		bad("body-limit-bytes", "%d: the limit must be at least 1 byte", f.bodyLimit)
	}
	nonNegative := map[string]int{"shutdown-grace-secs": f.graceSecs, "shutdown-kill-secs": f.killSecs}
	for _, name := range []string{"shutdown-grace-secs", "shutdown-kill-secs"} {
		if nonNegative[name] < 0 {
			bad(name, "%d is negative", nonNegative[name])
		}
	}
	if f.retainSecs < 1 {
		bad("retain-terminal-runs-secs", "%d: keep terminal runs at least 1 second", f.retainSecs)
	}
	if f.idemSecs < 1 {
		bad("idempotency-retention-secs", "%d: keep idempotency keys at least 1 second", f.idemSecs)
	}
	if f.retainAuditSecs < 1 {
		bad("retain-audit-secs", "%d: keep audit entries at least 1 second", f.retainAuditSecs)
	}
	if _, err := callback.NewPolicy(f.callbackAllowHosts); err != nil {
		errs = append(errs, fmt.Errorf("invalid value for %w", err))
	}
	s.CallbackAllow = clean(f.callbackAllowHosts)
	for _, d := range clean(f.fileDirs) {
		abs, err := filepath.Abs(d)
		if err != nil {
			bad("allow-file-dir", "%q: %v", d, err)
			continue
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			bad("allow-file-dir", "%q is not an existing directory", d)
			continue
		}
		s.FileDirs = append(s.FileDirs, abs)
	}
	confineSet, confineErrs := f.confine.settings(s.DataDir)
	s.Confine, errs = confineSet, append(errs, confineErrs...)
	if zone, err := time.LoadLocation(f.timezone); err != nil || f.timezone == "" || strings.EqualFold(f.timezone, "local") {
		bad("timezone", "%q is not an IANA time zone name such as UTC or Europe/Berlin", f.timezone)
	} else {
		s.Zone = zone
	}
	s.Pools = clean(f.pools)
	if len(s.Pools) == 0 {
		bad("pool", "no pool given: serve at least one (e.g. %s)", pool.Default)
	}
	for i, p := range s.Pools {
		if err := pool.Validate(p); err != nil {
			bad("pool", "%v", err)
		}
		for _, q := range s.Pools[:i] {
			if q == p {
				bad("pool", "%q is listed twice", p)
			}
		}
	}
	// The lease rules live in the domain; their messages name the flag to change.
	ttl := time.Duration(f.leaseTTLSecs) * time.Second
	if err := lease.ValidateTTL(ttl); err != nil {
		errs = append(errs, fmt.Errorf("invalid value: %w", err))
	}
	if f.leaderTTLSecs < minLeaseTTL {
		bad("leader-ttl-secs", "%d: the scheduler leader's TTL must be at least %d seconds", f.leaderTTLSecs, minLeaseTTL)
	}
	if err := lease.ValidatePollInterval(time.Duration(f.pollSecs)*time.Second, ttl); err != nil {
		errs = append(errs, fmt.Errorf("invalid value: %w", err))
	}
	if f.tries < 1 {
		bad("cluster-max-attempts", "%d: at least 1 attempt is needed", f.tries)
	}
	if lvl, err := parseLevel(f.logLevel); err != nil {
		bad("log-level", "%v", err)
	} else {
		s.LogLevel = lvl
	}
	if t, err := f.timeouts.settings(); err != nil {
		errs = append(errs, err)
	} else {
		s.Timeouts = t
	}
	if m, err := f.mcp.settings(); err != nil {
		errs = append(errs, err)
	} else {
		s.MCP = m
	}
	auth, err := f.auth()
	if err != nil {
		errs = append(errs, err)
	}
	s.Auth = auth
	if err == nil {
		if s.RequireApproval, err = checkApproval(f.requireApproval, auth); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, f.clusterErrors(auth)...)
	var opsErrs []error
	s.Ops, opsErrs = f.ops.settings()
	errs = append(errs, opsErrs...)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return s, nil
}

func secs(n int) time.Duration { return time.Duration(n) * time.Second }

// clean drops blank entries of a repeatable flag and trims the rest.
func clean(list []string) []string {
	var out []string
	for _, v := range list {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}

func checkListen(addr string) error {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%q is not host:port (e.g. %s)", addr, DefaultListen)
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return fmt.Errorf("%q: port %q is not a number from 0 to 65535", addr, port)
	}
	if strings.ContainsAny(host, " /") {
		return fmt.Errorf("%q: %q is not a host name or address", addr, host)
	}
	return nil
}

// checkHistoryURL accepts the history URLs the store opens; the store reports the rest
// (an unreachable server, a missing directory) when it connects.
func checkHistoryURL(u string) error {
	switch {
	case u == "memory":
		return nil
	case strings.HasPrefix(u, "sqlite://"):
		if strings.TrimPrefix(u, "sqlite://") == "" {
			return errors.New("sqlite:// needs a file path, e.g. sqlite://./.sluice/history.db")
		}
		return nil
	case strings.HasPrefix(u, "sqlite:"):
		if strings.TrimPrefix(u, "sqlite:") == "" {
			return errors.New("sqlite: needs a file path, e.g. sqlite:./.sluice/history.db")
		}
		return nil
	case strings.HasPrefix(u, "postgres://"), strings.HasPrefix(u, "postgresql://"):
		return nil
	}
	return fmt.Errorf("%q is not a history URL: use memory, sqlite:PATH, sqlite://PATH, postgres://… or postgresql://…",
		shortText(secret.MaskUserinfo(u), 60))
}

func shortText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// parseLevel reads --log-level.
func parseLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, nil
	case "info", "":
		return slog.LevelInfo, nil
	case "warn", "warning":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("%q is not debug, info, warn or error", s)
}
