package e2e_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/e2e"
)

// echoServer answers every line with the same line until the test ends.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, _ = io.Copy(c, c)
				_ = c.Close()
			}()
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return ln.Addr().String()
}

// roundTrip sends a line through c and reads the answer.
func roundTrip(c net.Conn, line string) (string, error) {
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := io.WriteString(c, line+"\n"); err != nil {
		return "", err
	}
	got, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", err
	}
	return got[:len(got)-1], nil
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestProxyForwardsCutsAndRestores(t *testing.T) {
	t.Parallel()
	p := e2e.NewProxy(t, echoServer(t))

	before := dial(t, p.Addr())
	got, err := roundTrip(before, "hello")
	require.NoError(t, err)
	require.Equal(t, "hello", got)
	require.Eventually(t, func() bool { return p.Open() == 1 }, time.Second, 5*time.Millisecond)
	require.Equal(t, 1, p.Served())

	p.Cut()
	_, err = roundTrip(before, "after the cut")
	require.Error(t, err, "an open connection is broken by the cut")
	require.False(t, isTimeout(err), "the break is noticed at once, not by a timeout: %v", err)
	// A new connection is refused: reset at the handshake or at its first exchange.
	if during, err := net.DialTimeout("tcp", p.Addr(), 2*time.Second); err == nil {
		_, err = roundTrip(during, "refused")
		_ = during.Close()
		require.Error(t, err, "a new connection is refused while cut")
		require.False(t, isTimeout(err), "%v", err)
	}
	require.Eventually(t, func() bool { return p.Open() == 0 }, time.Second, 5*time.Millisecond)

	p.Restore()
	after := dial(t, p.Addr())
	got, err = roundTrip(after, "again")
	require.NoError(t, err)
	require.Equal(t, "again", got)
	require.Equal(t, 2, p.Served())
	_, err = roundTrip(before, "still broken")
	require.Error(t, err, "a cut connection stays closed: clients reconnect")
}

func TestProxyURL(t *testing.T) {
	t.Parallel()
	p := e2e.NewProxy(t, "127.0.0.1:5432")
	raw := "postgres://postgres@127.0.0.1:5432/test?sslmode=disable&search_path=t_x"
	require.Equal(t, "postgres://postgres@"+p.Addr()+"/test?sslmode=disable&search_path=t_x", p.URL(t, raw))
	require.Equal(t, "127.0.0.1:5432", e2e.ProxyTarget(t, raw))
	require.Equal(t, "db.internal:5432", e2e.ProxyTarget(t, "postgres://db.internal/x"))
}

func TestProxyCloseEndsEverything(t *testing.T) {
	t.Parallel()
	p := e2e.NewProxy(t, echoServer(t))
	c := dial(t, p.Addr())
	_, err := roundTrip(c, "x")
	require.NoError(t, err)
	p.Close()
	p.Close() // twice is fine
	_, err = roundTrip(c, "y")
	require.Error(t, err)
	_, err = net.DialTimeout("tcp", p.Addr(), time.Second)
	require.Error(t, err, "a closed proxy listens no more")
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
