package execute

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"

	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/reach"
)

// Reach is the confinement port (SPEC §14.1). Every connector opens local paths, dials
// hosts and names the SQL database it uses through the Reach of its open request, so
// one policy decides what a config can touch and no connector re-implements it. `sluice
// serve` installs a confined Reach; `sluice run` executes its user's own file and uses
// Unconfined.
//
// key is the config key the value came from, relative to the connector's config block
// (e.g. "path", "connection_url"); the executor adds the block's path, so a refusal
// names pipeline.sink.config.path. Refusals are *reach.RefusedError values; the run
// fails with their code (path_refused, host_refused, history_refused).
type Reach interface {
	// Path resolves p — relative to base for `sluice run`, to the first allowed
	// directory when confined — cleans it, evaluates its symlinks and returns the real
	// path, which is what the connector must open. A path that does not exist yet (a
	// sink's file) has its existing parent evaluated. Safe for concurrent use.
	Path(ctx context.Context, key, base, p string) (string, error)
	// Dial connects to addr (host:port): every address the host resolves to is judged
	// right before it is dialed, so a name re-pointed after submit gains nothing.
	Dial(ctx context.Context, key, network, addr string) (net.Conn, error)
	// Database refuses a SQL database that is the server's own history.
	Database(ctx context.Context, key string, db reach.Database) error
	// Host judges a host before anything is resolved (a literal host at submit).
	Host(ctx context.Context, key, host string, port uint16) error
}

// Unconfined is the Reach of `sluice run`: paths resolve against the config file's
// directory, every host may be dialed, nothing is refused.
type Unconfined struct{}

// Path makes p absolute against base and cleans it; symlinks are left as they are.
func (Unconfined) Path(_ context.Context, _, base, p string) (string, error) {
	if filepath.IsAbs(p) || base == "" {
		return filepath.Clean(p), nil
	}
	return filepath.Join(base, p), nil
}

// Dial dials addr.
func (Unconfined) Dial(ctx context.Context, _, network, addr string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, addr)
}

// Database allows every database.
func (Unconfined) Database(context.Context, string, reach.Database) error { return nil }

// Host allows every host.
func (Unconfined) Host(context.Context, string, string, uint16) error { return nil }

// ReachOf returns r, or Unconfined when r is nil (a request built by a test or a tool
// that opens connectors directly).
func ReachOf(r Reach) Reach {
	if r == nil {
		return Unconfined{}
	}
	return r
}

// Confined reports whether r is anything but Unconfined (seen through the executor's
// key prefix). A connector that would otherwise use a process default that bypasses the
// dial policy (an HTTP proxy from the environment) asks it.
func Confined(r Reach) bool {
	for {
		switch v := r.(type) {
		case nil, Unconfined:
			return false
		case keyed:
			r = v.Reach
		default:
			return true
		}
	}
}

// keyed prefixes every key a connector passes with its config block's path.
type keyed struct {
	Reach
	prefix string
}

func (k keyed) Path(ctx context.Context, key, base, p string) (string, error) {
	return k.Reach.Path(ctx, k.prefix+key, base, p)
}

func (k keyed) Dial(ctx context.Context, key, network, addr string) (net.Conn, error) {
	return k.Reach.Dial(ctx, k.prefix+key, network, addr)
}

func (k keyed) Database(ctx context.Context, key string, db reach.Database) error {
	return k.Reach.Database(ctx, k.prefix+key, db)
}

func (k keyed) Host(ctx context.Context, key, host string, port uint16) error {
	return k.Reach.Host(ctx, k.prefix+key, host, port)
}

// reachFor is the Reach a connector of role gets.
func (e *Executor) reachFor(role string) Reach {
	return keyed{Reach: ReachOf(e.Reach), prefix: "pipeline." + role + ".config."}
}

// Target is something a connector config would reach, as its connector reads the
// config: a local path, a host it dials, a SQL database that could be the history.
type Target struct {
	Key      string // config key within the connector block, e.g. "path"
	Path     string
	Host     string
	Port     uint16
	Database *reach.Database
}

// Targeter is implemented by connectors that open paths or dial hosts: it lists the
// targets of a config so a submit can refuse them before the run is stored (SPEC
// §14.1). Values still holding a directive (resolved only where the run executes) are
// left out by the caller; the connector checks them again when it opens.
type Targeter interface {
	Targets(role pipeline.Role, config map[string]any) []Target
}

// CheckTargets checks the literal targets of cfg's source and sink against the Reach:
// the submit-time half of confinement. It returns every refusal, joined.
func (e *Executor) CheckTargets(ctx context.Context, cfg *pipeline.Config) error {
	if cfg == nil || e.Registry == nil {
		return nil
	}
	var errs []error
	sides := []struct {
		role  pipeline.Role
		name  string
		block pipeline.Connector
	}{{pipeline.RoleSource, RoleSource, cfg.Source}, {pipeline.RoleSink, RoleSink, cfg.Sink}}
	for _, side := range sides {
		var conn any
		var ok bool
		if side.role == pipeline.RoleSource {
			conn, ok = e.Registry.Source(side.block.Type)
		} else {
			conn, ok = e.Registry.Sink(side.block.Type)
		}
		t, isTargeter := conn.(Targeter)
		if !ok || !isTargeter {
			continue
		}
		r := e.reachFor(side.name)
		for _, target := range t.Targets(side.role, side.block.Config) {
			if err := checkTarget(ctx, r, target); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

func checkTarget(ctx context.Context, r Reach, t Target) error {
	var errs []error
	if t.Path != "" && !strings.Contains(t.Path, "${") {
		if _, err := r.Path(ctx, t.Key, "", t.Path); err != nil {
			errs = append(errs, err)
		}
	}
	if t.Host != "" && !strings.Contains(t.Host, "${") {
		if err := r.Host(ctx, t.Key, t.Host, t.Port); err != nil {
			errs = append(errs, err)
		}
	}
	if t.Database != nil && !strings.Contains(t.Database.Host+t.Database.Name, "${") {
		if err := r.Database(ctx, t.Key, *t.Database); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}
