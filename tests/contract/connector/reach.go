package connector

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/reach"
)

// Reaches says what a connector touches through the confinement port (SPEC §14.1).
type Reaches struct {
	// Paths: the connector opens local paths (file, sqlite) and must ask Reach.Path.
	Paths bool
	// Dials: the connector dials hosts (postgres, mysql) and must dial through Reach.Dial.
	Dials bool
	// Databases: the connector names its SQL database to Reach.Database before dialing,
	// so the history is refused without a connection ever being made.
	Databases bool
}

// refusingReach records every confinement call and refuses paths and dials; databases
// are refused only when refuseDB is set (so a dial can be observed otherwise).
type refusingReach struct {
	refuseDB bool

	mu    sync.Mutex
	calls []string // "path <key>", "dial <key>", "database <key>", "host <key>"
}

func (r *refusingReach) record(kind, key string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, kind+" "+key)
}

func (r *refusingReach) seen() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.calls...)
}

func (r *refusingReach) Path(_ context.Context, key, _, p string) (string, error) {
	r.record("path", key)
	return "", &reach.RefusedError{Kind: reach.ErrPathRefused, Key: key, Target: p, Reason: "refused by the contract suite"}
}

func (r *refusingReach) Dial(_ context.Context, key, _, addr string) (net.Conn, error) {
	r.record("dial", key)
	return nil, &reach.RefusedError{Kind: reach.ErrHostRefused, Key: key, Target: addr, Reason: "refused by the contract suite"}
}

func (r *refusingReach) Database(_ context.Context, key string, db reach.Database) error {
	r.record("database", key)
	if r.refuseDB {
		return &reach.RefusedError{Kind: reach.ErrHistoryRefused, Key: key, Target: db.String(), Reason: "refused by the contract suite"}
	}
	return nil
}

func (r *refusingReach) Host(_ context.Context, key, _ string, _ uint16) error {
	r.record("host", key)
	return nil
}

// runReach checks that opening goes through the Reach of the request: a connector that
// opens paths or dials fails with the refusal's code and touched nothing else; one that
// reaches nothing opens without asking.
func runReach(t *testing.T, h Harness) {
	t.Run("reach", func(t *testing.T) {
		ctx := context.Background()
		if h.NewSource != nil {
			t.Run("source", func(t *testing.T) {
				sc := h.NewSource(t, Data(3))
				checkReach(t, h.Caps.Reaches, sc.Config, func(r execute.Reach) (func(), error) {
					req := request(sc)
					req.Reach = r
					src, err := sc.Source.OpenSource(ctx, req)
					if err != nil {
						return nil, err
					}
					return func() { _ = src.Close() }, nil
				})
			})
		}
		if h.NewSink != nil {
			t.Run("sink", func(t *testing.T) {
				sc := h.NewSink(t)
				checkReach(t, h.Caps.Reaches, sc.Config, func(r execute.Reach) (func(), error) {
					snk, err := sc.Sink.OpenSink(ctx, execute.WriteRequest{Config: clone(sc.Config), BaseDir: sc.BaseDir, Reach: r})
					if err != nil {
						return nil, err
					}
					return func() { _ = snk.Abort(ctx) }, nil
				})
				if sc.ReadBack != nil {
					_, exists := sc.ReadBack(t, Data(3).Columns)
					require.False(t, exists, "a refused sink leaves no output")
				}
			})
		}
	})
}

func checkReach(t *testing.T, want Reaches, config map[string]any, open func(execute.Reach) (func(), error)) {
	t.Helper()
	fake := &refusingReach{}
	release, err := open(fake)
	calls := fake.seen()
	if !want.Paths && !want.Dials && !want.Databases {
		require.NoError(t, err, "a connector that reaches nothing opens under any confinement")
		release()
		require.Empty(t, calls, "a connector that declares no reach must not ask the confinement")
		return
	}
	require.Error(t, err, "opening must go through the refusing confinement; calls: %v", calls)
	require.NotEmpty(t, reach.CodeOf(err), "the refusal is kept in the error chain, so the run fails with its code: %v", err)
	for _, c := range calls {
		_, key, _ := strings.Cut(c, " ")
		require.Contains(t, config, key, "confinement call %q names a config key of the connector", c)
	}
	if want.Paths {
		require.Contains(t, kinds(calls), "path", "a path-opening connector asks Reach.Path")
		require.ErrorIs(t, err, reach.ErrPathRefused)
	}
	if want.Dials {
		require.Contains(t, kinds(calls), "dial", "a dialing connector dials through Reach.Dial")
		require.ErrorIs(t, err, reach.ErrHostRefused)
	}
	if want.Databases {
		require.Contains(t, kinds(calls), "database", "a SQL connector names its database to Reach.Database")
		strict := &refusingReach{refuseDB: true}
		_, err := open(strict)
		require.ErrorIs(t, err, reach.ErrHistoryRefused)
		require.NotContains(t, kinds(strict.seen()), "dial", "the history is refused before anything is dialed")
	}
}

func kinds(calls []string) []string {
	out := make([]string, len(calls))
	for i, c := range calls {
		out[i], _, _ = strings.Cut(c, " ")
	}
	return out
}
