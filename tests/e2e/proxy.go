package e2e

import (
	"errors"
	"io"
	"net"
	"net/url"
	"sync"
	"testing"
	"time"
)

// Proxy is a loopback TCP proxy a test puts between a process and its database, so it
// can take the link away and give it back: Cut resets every connection and refuses new
// ones (they are accepted and reset at once, as by a firewall that rejects), Restore
// forwards again. Closed when the test ends.
type Proxy struct {
	ln     net.Listener
	target string

	mu     sync.Mutex
	cut    bool
	closed bool
	conns  map[net.Conn]struct{} // both ends of every forwarded connection
	served int                   // connections forwarded so far

	wg sync.WaitGroup
}

// NewProxy listens on 127.0.0.1:0 and forwards every connection to target (host:port).
func NewProxy(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("proxy: listen: %v", err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	t.Cleanup(p.Close)
	return p
}

// Addr is the address clients connect to.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// URL returns rawURL (a database URL) with its host and port replaced by the proxy's.
func (p *Proxy) URL(t testing.TB, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatalf("proxy: %q is not a URL", rawURL)
	}
	u.Host = p.Addr()
	return u.String()
}

// ProxyTarget is the host:port of a database URL, what NewProxy forwards to.
func ProxyTarget(t testing.TB, rawURL string) string {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		t.Fatalf("proxy: %q is not a URL with a host", rawURL)
	}
	if u.Port() == "" {
		return net.JoinHostPort(u.Hostname(), "5432")
	}
	return u.Host
}

// Cut resets every open connection and refuses new ones until Restore.
func (p *Proxy) Cut() {
	p.mu.Lock()
	p.cut = true
	open := make([]net.Conn, 0, len(p.conns))
	for c := range p.conns {
		open = append(open, c)
	}
	p.mu.Unlock()
	for _, c := range open {
		reset(c)
	}
}

// Restore forwards new connections again. Connections cut earlier stay closed: clients
// reconnect, as they would after a real outage.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.cut = false
	p.mu.Unlock()
}

// Open counts the forwarded connections open right now.
func (p *Proxy) Open() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns) / 2
}

// Served counts the connections forwarded since the proxy started.
func (p *Proxy) Served() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.served
}

// Close stops the proxy and closes every connection.
func (p *Proxy) Close() {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	p.mu.Unlock()
	_ = p.ln.Close()
	p.Cut()
	p.wg.Wait()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			time.Sleep(10 * time.Millisecond) // e.g. out of file descriptors: try again
			continue
		}
		p.mu.Lock()
		refuse := p.cut || p.closed
		p.mu.Unlock()
		if refuse {
			reset(c)
			continue
		}
		p.wg.Add(1)
		go p.forward(c)
	}
}

func (p *Proxy) forward(client net.Conn) {
	defer p.wg.Done()
	server, err := net.DialTimeout("tcp", p.target, 5*time.Second)
	if err != nil {
		reset(client)
		return
	}
	p.mu.Lock()
	if p.cut || p.closed {
		p.mu.Unlock()
		reset(client)
		reset(server)
		return
	}
	p.conns[client], p.conns[server] = struct{}{}, struct{}{}
	p.served++
	p.mu.Unlock()

	var pair sync.WaitGroup
	pipe := func(dst, src net.Conn) {
		defer pair.Done()
		_, _ = io.Copy(dst, src)
		// One direction ended: end both, so neither side waits on a half-open link.
		_ = dst.Close()
		_ = src.Close()
	}
	pair.Add(2)
	go pipe(server, client)
	go pipe(client, server)
	pair.Wait()

	p.mu.Lock()
	delete(p.conns, client)
	delete(p.conns, server)
	p.mu.Unlock()
}

// reset closes c with an RST rather than a FIN, so the peer sees a broken link at once.
func reset(c net.Conn) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = c.Close()
}
