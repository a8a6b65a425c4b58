package confine

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/reach"
)

// Resolver looks host names up; *net.Resolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// Config is what the server's flags say.
type Config struct {
	// AllowPaths are the --allow-path directories; each must exist. The first resolves
	// relative paths.
	AllowPaths []string
	// DataDir is --data-dir: closed except for allowed directories inside it.
	DataDir string
	// Files are the files named by --auth-config and the other --*-file flags.
	Files []reach.PathFile
	// History is the --history URL (memory, sqlite:…, postgres://…).
	History string
	// AllowHosts are the --allow-host patterns.
	AllowHosts []string
	// Resolver looks names up; nil is net.DefaultResolver.
	Resolver Resolver
}

// Confinement is the confined execute.Reach of `sluice serve`. It is safe for
// concurrent use.
type Confinement struct {
	paths    reach.Paths
	hosts    reach.Hosts
	history  reach.Database // Name is "" unless the history is PostgreSQL
	resolver Resolver
	dialer   *net.Dialer
}

var _ execute.Reach = (*Confinement)(nil)

// New builds the confinement from the server's settings. Errors name the flag.
func New(ctx context.Context, cfg Config) (*Confinement, error) {
	c := &Confinement{resolver: cfg.Resolver, dialer: &net.Dialer{Timeout: 30 * time.Second}}
	if c.resolver == nil {
		c.resolver = net.DefaultResolver
	}
	hosts, err := reach.ParseHosts(cfg.AllowHosts)
	if err != nil {
		return nil, err
	}
	c.hosts = hosts
	var allow []string
	for _, d := range cfg.AllowPaths {
		real, err := realDir(d)
		if err != nil {
			return nil, fmt.Errorf("--allow-path %q: %w", d, err)
		}
		allow = append(allow, real)
	}
	dataDir, err := realPath(absolute(cfg.DataDir))
	if err != nil {
		return nil, fmt.Errorf("--data-dir %q: %w", cfg.DataDir, err)
	}
	var files []reach.PathFile
	for _, f := range cfg.Files {
		if f.Path == "" {
			continue
		}
		real, err := realPath(absolute(f.Path))
		if err != nil {
			return nil, fmt.Errorf("%s %q: %w", f.Flag, f.Path, err)
		}
		files = append(files, reach.PathFile{Path: real, Flag: f.Flag})
	}
	historyFile, err := c.historyTarget(ctx, cfg.History)
	if err != nil {
		return nil, err
	}
	c.paths = reach.NewPaths(allow, dataDir, files, historyFile)
	return c, nil
}

// historyTarget learns what the history is: its real file for SQLite, its database for
// PostgreSQL (kept in c.history).
func (c *Confinement) historyTarget(ctx context.Context, history string) (string, error) {
	switch {
	case history == "" || history == "memory":
		return "", nil
	case strings.HasPrefix(history, "postgres://"), strings.HasPrefix(history, "postgresql://"):
		pc, err := pgx.ParseConfig(history)
		if err != nil {
			return "", errors.New("--history: cannot parse the PostgreSQL URL")
		}
		c.history = reach.PostgresDatabase(pc.Host, pc.Port, pc.Database, reach.SearchPath(pc.RuntimeParams))
		c.history.Addrs = c.lookup(ctx, c.history.Host)
		return "", nil
	}
	p := strings.TrimPrefix(strings.TrimPrefix(history, "sqlite://"), "sqlite:")
	p, _, _ = strings.Cut(p, "?")
	real, err := realPath(absolute(p))
	if err != nil {
		return "", fmt.Errorf("--history %q: %w", p, err)
	}
	return real, nil
}

// Allowed lists the real allowed directories, the first being where relative paths go.
func (c *Confinement) Allowed() []string { return c.paths.Allowed() }

// Path implements execute.Reach: base is ignored, relative paths resolve against the
// first allowed directory.
func (c *Confinement) Path(_ context.Context, key, _, p string) (string, error) {
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.paths.Base(), p)
	}
	p = filepath.Clean(p)
	real, err := realPath(p)
	if err != nil {
		return "", &reach.RefusedError{Kind: reach.ErrPathRefused, Key: key, Target: p, Reason: err.Error()}
	}
	if err := c.paths.Check(key, real); err != nil {
		return "", err
	}
	return real, nil
}

// Host implements execute.Reach.
func (c *Confinement) Host(_ context.Context, key, host string, port uint16) error {
	return c.hosts.CheckName(key, host, port)
}

// Database implements execute.Reach: db is refused when it is the PostgreSQL history.
func (c *Confinement) Database(ctx context.Context, key string, db reach.Database) error {
	if c.history.Name == "" {
		return nil
	}
	if len(db.Addrs) == 0 {
		db.Addrs = c.lookup(ctx, db.Host)
	}
	return reach.CheckHistory(key, c.history, db)
}

// lookup resolves host, quietly: a name that does not resolve cannot be dialed either,
// and the comparison falls back to the name.
func (c *Confinement) lookup(ctx context.Context, host string) []netip.Addr {
	if host == "" || strings.HasPrefix(host, "/") {
		return nil
	}
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return []netip.Addr{a.WithZone("").Unmap()}
	}
	addrs, err := c.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for i, a := range addrs {
		addrs[i] = a.WithZone("").Unmap()
	}
	return addrs
}

// Dial implements execute.Reach: the host is judged by name, resolved, and every
// address judged before it is dialed; the first allowed one that answers wins.
func (c *Confinement) Dial(ctx context.Context, key, network, addr string) (net.Conn, error) {
	if strings.HasPrefix(network, "unix") {
		return nil, &reach.RefusedError{Kind: reach.ErrHostRefused, Key: key, Target: addr,
			Reason: "a served config may not dial a unix socket; give a TCP host and port (see --allow-host)"}
	}
	host, portText, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	port64, err := strconv.ParseUint(portText, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("dial %s: port %q is not a number", addr, portText)
	}
	port := uint16(port64)
	if err := c.hosts.CheckName(key, host, port); err != nil {
		return nil, err
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = c.resolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, err
	}
	var refused, failed []error
	for _, a := range addrs {
		if err := c.hosts.CheckAddr(key, host, a, port); err != nil {
			refused = append(refused, err)
			continue
		}
		conn, err := c.dialer.DialContext(ctx, network, netip.AddrPortFrom(a.WithZone("").Unmap(), port).String())
		if err == nil {
			return conn, nil
		}
		failed = append(failed, err)
	}
	if len(failed) > 0 {
		return nil, errors.Join(failed...)
	}
	if len(refused) > 0 {
		// Only refusals: the run fails host_refused, naming the first address.
		return nil, refused[0]
	}
	return nil, fmt.Errorf("host %q has no addresses", host)
}

func absolute(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

// realDir is the real path of an existing directory.
func realDir(d string) (string, error) {
	real, err := filepath.EvalSymlinks(absolute(d))
	if err != nil {
		return "", fmt.Errorf("not an existing directory: %w", err)
	}
	if st, err := os.Stat(real); err != nil || !st.IsDir() {
		return "", errors.New("not a directory")
	}
	return real, nil
}

// realPath evaluates the symlinks of the clean absolute path p. A path that does not
// exist yet (a file a sink will create) gets its nearest existing parent evaluated and
// the rest appended. A dangling symlink is an error: opening it would create its target,
// wherever that is.
func realPath(p string) (string, error) {
	real, err := filepath.EvalSymlinks(p)
	if err == nil {
		return real, nil
	}
	if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("cannot resolve its symlinks: %w", unwrapPath(err))
	}
	// The nearest existing parent is looked for from the root down: walking up from p,
	// resolving each parent again, costs the square of the path's length (a hostile
	// 900 KB path took seconds of CPU per request).
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != filepath.Separator {
			continue
		}
		q := p[:i]
		_, serr := os.Stat(q)
		if serr == nil {
			continue
		}
		if !errors.Is(serr, fs.ErrNotExist) {
			return "", fmt.Errorf("cannot resolve its symlinks: %w", unwrapPath(serr))
		}
		if st, lerr := os.Lstat(q); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
			return "", errors.New("it is a symlink whose target does not exist")
		}
		parent := filepath.Dir(q)
		rp, err := filepath.EvalSymlinks(parent)
		if err != nil {
			return "", fmt.Errorf("cannot resolve its symlinks: %w", unwrapPath(err))
		}
		return filepath.Join(rp, p[len(parent):]), nil
	}
	// Every part exists after all (created since): resolve it whole.
	real, err = filepath.EvalSymlinks(p)
	if err != nil {
		return "", fmt.Errorf("cannot resolve its symlinks: %w", unwrapPath(err))
	}
	return real, nil
}

// unwrapPath drops the *fs.PathError wrapper, whose text repeats the path.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
