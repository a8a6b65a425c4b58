package suites

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// The processes and the history of the cluster suite: `sluice serve --cluster` members
// on loopback ports sharing one PostgreSQL schema, driven over their HTTP API.

const (
	clusterSchema = "sluice_bench_cluster"
	clusterToken  = "bench-cluster-token"
	memberStartup = 60 * time.Second
)

// benchCluster is one measurement's history and the members started on it.
type benchCluster struct {
	bin     string
	dir     string
	history string // the schema's URL
	members []*benchMember
}

// newBenchCluster drops and recreates the suite's schema, so every measurement starts
// from an empty history.
func newBenchCluster(ctx context.Context, bin, dir, baseURL string) (*benchCluster, error) {
	conn, err := pgx.Connect(ctx, baseURL)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	defer conn.Close(ctx)
	for _, s := range []string{"DROP SCHEMA IF EXISTS " + clusterSchema + " CASCADE", "CREATE SCHEMA " + clusterSchema} {
		if _, err := conn.Exec(ctx, s); err != nil {
			return nil, fmt.Errorf("postgres: %s: %w", s, err)
		}
	}
	u, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("the PostgreSQL URL does not parse: %w", err)
	}
	q := u.Query()
	q.Set("search_path", clusterSchema)
	u.RawQuery = q.Encode()
	return &benchCluster{bin: bin, dir: dir, history: u.String()}, nil
}

// benchMember is one serve process.
type benchMember struct {
	name   string
	addr   string
	cmd    *exec.Cmd
	stderr *lockedWriter
	done   chan struct{}
	client *http.Client
}

// start starts a member with the suite's shared flags plus extra, and waits until it is
// ready.
func (c *benchCluster) start(ctx context.Context, name string, extra ...string) (*benchMember, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	data, err := os.MkdirTemp(c.dir, "member-")
	if err != nil {
		return nil, err
	}
	args := append([]string{"serve", "--cluster", "--history", c.history, "--listen", addr, "--data-dir", data,
		"--auth-token", clusterToken, "--log-level", "warn", "--cluster-poll-secs", "1"}, extra...)
	cmd := exec.Command(c.bin, args...)
	m := &benchMember{name: name, addr: addr, cmd: cmd, stderr: &lockedWriter{}, done: make(chan struct{}),
		client: &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: 64}}}
	cmd.Stdout = io.Discard // the runs' rows
	cmd.Stderr = m.stderr
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	go func() { _ = cmd.Wait(); close(m.done) }()
	c.members = append(c.members, m)
	deadline := time.Now().Add(memberStartup)
	for {
		status, _, err := m.do(ctx, http.MethodGet, "/readyz", nil)
		if err == nil && status == http.StatusOK {
			return m, nil
		}
		select {
		case <-m.done:
			return nil, fmt.Errorf("%s exited while starting: %s", name, m.stderrTail())
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s is not ready after %s: %s", name, memberStartup, m.stderrTail())
		}
	}
}

// stop kills every member that is still running and waits for it.
func (c *benchCluster) stop() {
	for _, m := range c.members {
		m.signal(syscall.SIGKILL)
		<-m.done
		m.client.CloseIdleConnections()
	}
	c.members = nil
}

func (m *benchMember) signal(sig syscall.Signal) {
	select {
	case <-m.done:
	default:
		_ = m.cmd.Process.Signal(sig)
	}
}

func (m *benchMember) stderrTail() string {
	s := m.stderr.String()
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	return strings.TrimSpace(s)
}

func (m *benchMember) do(ctx context.Context, method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+m.addr+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+clusterToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := m.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// submit posts a run and returns its id.
func (m *benchMember) submit(ctx context.Context, body map[string]any) (string, error) {
	status, data, err := m.do(ctx, http.MethodPost, "/v1/runs", body)
	if err != nil {
		return "", fmt.Errorf("%s: submit: %w", m.name, err)
	}
	var out struct {
		RunID string `json:"run_id"`
	}
	if status != http.StatusAccepted || json.Unmarshal(data, &out) != nil || out.RunID == "" {
		return "", fmt.Errorf("%s: submit answered %d: %s", m.name, status, data)
	}
	return out.RunID, nil
}

// cancel asks the member to cancel a run.
func (m *benchMember) cancel(ctx context.Context, id string) error {
	status, data, err := m.do(ctx, http.MethodPost, "/v1/runs/"+id+"/cancel", nil)
	if err != nil {
		return fmt.Errorf("%s: cancel: %w", m.name, err)
	}
	if status != http.StatusOK && status != http.StatusAccepted {
		return fmt.Errorf("%s: cancel answered %d: %s", m.name, status, data)
	}
	return nil
}

// lockedWriter lets the child write stderr while a failure message reads it.
type lockedWriter struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedWriter) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// runTimes are a run's status and the history's timestamps (Unix ms, database clock
// except created_at, which the submitting member's clock wrote on the same host).
type runTimes struct {
	Status     string
	Owner      string
	CreatedAt  int64
	ClaimedAt  *int64
	FinishedAt *int64
}

// historyDB reads the suite's history directly: timings come from its columns, so
// polling the API adds nothing to what is measured.
type historyDB struct{ conn *pgx.Conn }

func (c *benchCluster) db(ctx context.Context) (*historyDB, error) {
	conn, err := pgx.Connect(ctx, c.history)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	return &historyDB{conn: conn}, nil
}

func (h *historyDB) close() { _ = h.conn.Close(context.Background()) }

func (h *historyDB) run(ctx context.Context, id string) (runTimes, error) {
	var r runTimes
	var owner *string
	err := h.conn.QueryRow(ctx, `SELECT status, owner, created_at, claimed_at, finished_at FROM sluice_runs WHERE id = $1`, id).
		Scan(&r.Status, &owner, &r.CreatedAt, &r.ClaimedAt, &r.FinishedAt)
	if owner != nil {
		r.Owner = *owner
	}
	return r, err
}

// waitRun polls the run until ok accepts it.
func (h *historyDB) waitRun(ctx context.Context, id string, within time.Duration, ok func(runTimes) bool) (runTimes, error) {
	deadline := time.Now().Add(within)
	for {
		r, err := h.run(ctx, id)
		if err == nil && ok(r) {
			return r, nil
		}
		if time.Now().After(deadline) {
			return r, fmt.Errorf("run %s: still %q after %s (%v)", id, r.Status, within, err)
		}
		select {
		case <-ctx.Done():
			return r, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// instanceOf reads a member's instance id from its row (by listen address).
func (h *historyDB) instanceOf(ctx context.Context, m *benchMember) (string, error) {
	var id string
	err := h.conn.QueryRow(ctx, `SELECT instance_id FROM sluice_members WHERE listen = $1 AND stopped_at IS NULL
ORDER BY started_at DESC LIMIT 1`, m.addr).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fmt.Errorf("%s has no member row", m.name)
	}
	return id, err
}

// metrics is the member's /metrics text.
func (m *benchMember) metrics(ctx context.Context) (string, error) {
	status, body, err := m.do(ctx, http.MethodGet, "/metrics", nil)
	if err != nil || status != http.StatusOK {
		return "", fmt.Errorf("%s: GET /metrics answered %d: %v", m.name, status, err)
	}
	return string(body), nil
}

// memberCounters are sums over the burning members of the /metrics counters named by
// counterNames, at the same index.
type memberCounters [len(counterNames)]float64

// Indexes of memberCounters.
const (
	claimStatements = iota
	claimedRuns
	finishTransactions
	finishedRuns
	allocatedBytes
	collections
)

// counterNames are the /metrics lines read into memberCounters: the count and sum of the
// batch histograms, and the Go runtime's bytes allocated and collections.
var counterNames = [...]string{
	claimStatements: "sluice_serve_claim_batch_runs_count", claimedRuns: "sluice_serve_claim_batch_runs_sum",
	finishTransactions: "sluice_serve_finish_batch_runs_count", finishedRuns: "sluice_serve_finish_batch_runs_sum",
	allocatedBytes: "go_memstats_alloc_bytes_total", collections: "go_gc_duration_seconds_count",
}

// readCounters sums counterNames over the members.
func readCounters(ctx context.Context, members []*benchMember) (memberCounters, error) {
	var c memberCounters
	for _, m := range members {
		text, err := m.metrics(ctx)
		if err != nil {
			return memberCounters{}, err
		}
		for i, name := range counterNames {
			x, err := metricValue(text, name)
			if err != nil {
				return memberCounters{}, fmt.Errorf("%s: %w", m.name, err)
			}
			c[i] += x
		}
	}
	return c, nil
}

// since is what the counters grew by from before.
func (c memberCounters) since(before memberCounters) memberCounters {
	for i := range c {
		c[i] -= before[i]
	}
	return c
}

// perBatch is the mean runs per claim statement and per finish transaction.
func (c memberCounters) perBatch() (perClaim, perFinish float64, err error) {
	if c[claimStatements] == 0 || c[finishTransactions] == 0 {
		return 0, 0, fmt.Errorf("the members' /metrics counted %v claims and %v finish transactions",
			c[claimStatements], c[finishTransactions])
	}
	return c[claimedRuns] / c[claimStatements], c[finishedRuns] / c[finishTransactions], nil
}
