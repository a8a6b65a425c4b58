package store_test

import (
	"context"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/tests/testdb"
)

// A history that does not answer is run.ErrUnavailable (history_unavailable, 503), so a
// caller can tell "try again" from a refused request.
func TestUnansweredStatementsAreUnavailable(t *testing.T) {
	t.Parallel()
	s, err := store.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "h.db"), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), -time.Second)
	defer cancel()
	require.ErrorIs(t, s.Ping(ctx), run.ErrUnavailable, "a statement out of time")
}

func TestLostPostgresLinkIsUnavailable(t *testing.T) {
	t.Parallel()
	raw := testdb.Postgres(t)
	u, err := url.Parse(raw)
	require.NoError(t, err)
	target := u.Host
	if u.Port() == "" {
		target = net.JoinHostPort(u.Hostname(), "5432")
	}
	p := newCutProxy(t, target)
	u.Host = p.ln.Addr().String()

	s, err := store.Open(context.Background(), u.String(), store.Options{})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.Migrate(context.Background()))

	p.cut()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.ErrorIs(t, s.Ping(ctx), run.ErrUnavailable)
	_, _, err = s.Roster(ctx)
	require.ErrorIs(t, err, run.ErrUnavailable)
	_, err = s.Get(ctx, "01990000-0000-7000-8000-000000000000")
	require.ErrorIs(t, err, run.ErrUnavailable, "not ErrNotFound: nothing was looked up")
}

// cutProxy forwards TCP to target until cut, which resets every connection and refuses
// new ones.
type cutProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
	down  bool
}

func newCutProxy(t *testing.T, target string) *cutProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &cutProxy{ln: ln}
	t.Cleanup(func() { p.cut(); _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			down := p.down
			p.mu.Unlock()
			if down {
				_ = c.Close()
				continue
			}
			go p.forward(c, target)
		}
	}()
	return p
}

func (p *cutProxy) forward(c net.Conn, target string) {
	s, err := net.DialTimeout("tcp", target, 5*time.Second)
	if err != nil {
		_ = c.Close()
		return
	}
	p.mu.Lock()
	p.conns = append(p.conns, c, s)
	p.mu.Unlock()
	go func() { _, _ = io.Copy(s, c); _ = s.Close() }()
	_, _ = io.Copy(c, s)
	_ = c.Close()
}

func (p *cutProxy) cut() {
	p.mu.Lock()
	p.down = true
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for _, c := range conns {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetLinger(0)
		}
		_ = c.Close()
	}
}
