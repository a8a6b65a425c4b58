package bootstrap

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/spf13/pflag"

	"github.com/sluicehq/sluice/adapters/confine"
	"github.com/sluicehq/sluice/adapters/statepg"
	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/reach"
)

// FilesDirName is the default --allow-path directory inside --data-dir.
const FilesDirName = "files"

// confineFlags are the confinement flags of `sluice serve` (SPEC §14.1).
type confineFlags struct {
	allowPaths, allowHosts []string
	// fs is serve's flag set: every --*-file flag (and --auth-config) names a file no
	// connector may open, including flags added later.
	fs *pflag.FlagSet
}

func (c *confineFlags) register(fs *pflag.FlagSet) {
	c.fs = fs
	fs.StringSliceVar(&c.allowPaths, "allow-path", nil, "directory file-like connectors of submitted configs (file paths and globs, sqlite: URLs) may read and write; relative paths resolve against the first (repeatable; default <data-dir>/"+FilesDirName+", created at start)")
	fs.StringSliceVar(&c.allowHosts, "allow-host", nil, "host name, *.suffix, IP address or CIDR, optionally with :port, that connectors of submitted configs may dial; when given, every other host is refused (repeatable; default: any host but link-local and cloud metadata addresses, which are always refused)")
}

// confineSettings are the validated confinement settings.
type confineSettings struct {
	AllowPaths   []string // absolute
	DefaultFiles bool     // AllowPaths is the default <data-dir>/files, created at start
	AllowHosts   []string
	Files        []reach.PathFile
}

// settings validates the flags; dataDir is the absolute --data-dir.
func (c *confineFlags) settings(dataDir string) (confineSettings, []error) {
	var s confineSettings
	var errs []error
	for _, d := range clean(c.allowPaths) {
		abs, err := filepath.Abs(d)
		if err != nil {
			errs = append(errs, fmt.Errorf("invalid value for --allow-path: %q: %w", d, err))
			continue
		}
		if fi, err := os.Stat(abs); err != nil || !fi.IsDir() {
			errs = append(errs, fmt.Errorf("invalid value for --allow-path: %q is not an existing directory", d))
			continue
		}
		s.AllowPaths = append(s.AllowPaths, abs)
	}
	if len(s.AllowPaths) == 0 && len(errs) == 0 && dataDir != "" {
		s.AllowPaths, s.DefaultFiles = []string{filepath.Join(dataDir, FilesDirName)}, true
	}
	s.AllowHosts = clean(c.allowHosts)
	if _, err := reach.ParseHosts(s.AllowHosts); err != nil {
		errs = append(errs, fmt.Errorf("invalid value for %w", err))
	}
	if c.fs != nil {
		c.fs.VisitAll(func(f *pflag.Flag) {
			if v := strings.TrimSpace(f.Value.String()); v != "" && (f.Name == "auth-config" || strings.HasSuffix(f.Name, "-file")) {
				s.Files = append(s.Files, reach.PathFile{Path: v, Flag: "--" + f.Name})
			}
		})
	}
	return s, errs
}

// provideConfinement builds the confined Reach of served configs, creating the default
// <data-dir>/files directory first.
func provideConfinement(s *serveSettings) (*confine.Confinement, error) {
	c := s.Confine
	if c.DefaultFiles {
		// The data directory keeps its own mode (tokens live there); files is opened up
		// only as far as a sink's output needs.
		if err := os.MkdirAll(s.DataDir, 0o700); err != nil {
			return nil, fmt.Errorf("--data-dir: %w", err)
		}
		if err := os.MkdirAll(c.AllowPaths[0], 0o750); err != nil {
			return nil, fmt.Errorf("--allow-path default %s: %w", c.AllowPaths[0], err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	return confine.New(ctx, confine.Config{
		AllowPaths: c.AllowPaths,
		DataDir:    s.DataDir,
		Files:      c.Files,
		History:    s.History,
		AllowHosts: c.AllowHosts,
	})
}

// confinedStates opens `state: {type: postgres}` stores only at a host the dial policy
// allows and never in the history database (SPEC §14.1). The bookmark store keeps its
// own connection pool, so the check is made on the URL before it is opened.
func confinedStates(stores *statepg.Stores, r execute.Reach) cluster.StateOpener {
	return func(ctx context.Context, st pipeline.State) (execute.StateStore, error) {
		if raw, _ := st.Config["connection_url"].(string); raw != "" {
			if pc, err := pgx.ParseConfig(raw); err == nil {
				const key = "pipeline.state.config.connection_url"
				if err := r.Host(ctx, key, pc.Host, pc.Port); err != nil {
					return nil, err
				}
				db := reach.PostgresDatabase(pc.Host, pc.Port, pc.Database, reach.SearchPath(pc.RuntimeParams))
				if err := r.Database(ctx, key, db); err != nil {
					return nil, err
				}
			}
		}
		return stores.Open(ctx, st)
	}
}
