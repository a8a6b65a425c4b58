package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// MemberConfig is how one `sluice serve` process of a test starts. Zero values leave a
// flag out, so the server's default applies.
type MemberConfig struct {
	// History is the --history URL (required with Cluster).
	History string
	// Cluster adds --cluster; StartCluster sets it.
	Cluster bool
	// Token is the --auth-token; "" makes the harness choose one. With AuthConfig it is
	// only the bearer the harness sends, and must be one of the file's tokens.
	Token string
	// AuthConfig is an --auth-config file of principals, passed instead of --auth-token.
	AuthConfig string
	// Listen is the --listen address; "" picks a free loopback port.
	Listen string
	// Pools are passed as one --pool comma list.
	Pools             []string
	LeaseTTLSecs      int // --lease-ttl-secs
	PollSecs          int // --cluster-poll-secs
	MaxAttempts       int // --cluster-max-attempts
	PoolWaitSecs      int // --pool-wait-timeout-secs
	MaxConcurrent     int // --max-concurrent-runs
	ShutdownGraceSecs *int
	ShutdownKillSecs  *int
	PollOnly          bool // --poll-only
	// DataDir is --data-dir; "" uses a fresh temporary directory.
	DataDir string
	// Extra flags go last, as given.
	Extra []string
	// Env is added to the process environment (parent SLUICE_* variables never are).
	Env map[string]string
	// Timeout bounds the process's life; default 15 minutes.
	Timeout time.Duration
}

// Secs is a helper for the optional duration fields: Secs(0) passes an explicit 0.
func Secs(n int) *int { return &n }

// Args are the command-line arguments of the serve process.
func (c MemberConfig) Args() []string {
	args := []string{"serve"}
	if c.Cluster {
		args = append(args, "--cluster")
	}
	add := func(flag, value string) { args = append(args, "--"+flag, value) }
	if c.History != "" {
		add("history", c.History)
	}
	add("listen", c.Listen)
	if c.AuthConfig != "" {
		add("auth-config", c.AuthConfig)
	} else {
		add("auth-token", c.Token)
	}
	add("data-dir", c.DataDir)
	if len(c.Pools) > 0 {
		add("pool", strings.Join(c.Pools, ","))
	}
	for _, f := range []struct {
		flag string
		v    int
	}{
		{"lease-ttl-secs", c.LeaseTTLSecs}, {"cluster-poll-secs", c.PollSecs},
		{"cluster-max-attempts", c.MaxAttempts}, {"pool-wait-timeout-secs", c.PoolWaitSecs},
		{"max-concurrent-runs", c.MaxConcurrent},
	} {
		if f.v != 0 {
			add(f.flag, strconv.Itoa(f.v))
		}
	}
	if c.ShutdownGraceSecs != nil {
		add("shutdown-grace-secs", strconv.Itoa(*c.ShutdownGraceSecs))
	}
	if c.ShutdownKillSecs != nil {
		add("shutdown-kill-secs", strconv.Itoa(*c.ShutdownKillSecs))
	}
	if c.PollOnly {
		args = append(args, "--poll-only")
	}
	return append(args, c.Extra...)
}

// Member is one running serve process.
type Member struct {
	Name   string // m0, m1, … within a cluster; for messages only
	Config MemberConfig
	Proc   *Process
	// URL is the base URL of its API, http://Listen.
	URL    string
	client *http.Client
	// instanceID caches InstanceID: a member killed later still has one.
	instanceID string
}

// FreeAddr returns a loopback address with a port nobody listens on right now.
func FreeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return addr
}

// StartMember starts a serve process and returns once it answers /livez. The process is
// killed when the test ends, and its stderr is logged if the test failed.
func StartMember(t testing.TB, name string, cfg MemberConfig) *Member {
	t.Helper()
	if cfg.Listen == "" {
		cfg.Listen = FreeAddr(t)
	}
	if cfg.Token == "" {
		cfg.Token = "e2e-token-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	if !slices.Contains(cfg.Extra, "--allow-path") {
		// Tests keep their inputs and outputs in their own temporary directories.
		cfg.Extra = append(slices.Clone(cfg.Extra), "--allow-path", TestRoot(t))
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 15 * time.Minute
	}
	m := &Member{Name: name, Config: cfg, URL: "http://" + cfg.Listen,
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}}
	m.Proc = Start(t, Cmd{Args: cfg.Args(), Env: cfg.Env, Timeout: cfg.Timeout})
	t.Cleanup(func() {
		m.client.CloseIdleConnections()
		if t.Failed() {
			t.Logf("--- %s (%s) stderr, last 8 KiB:\n%s", name, cfg.Listen, tail(m.Proc.Stderr(), 8<<10))
		}
	})
	m.WaitLive(t, 30*time.Second)
	return m
}

// Restart starts a new process with the same configuration (a new instance id) on the
// same address; the old one must have exited or been killed.
func (m *Member) Restart(t testing.TB) *Member {
	t.Helper()
	return StartMember(t, m.Name, m.Config)
}

// PID is the process id.
func (m *Member) PID() int { return m.Proc.cmd.Process.Pid }

// exited reports whether the process has ended (it is a zombie nobody waited for yet),
// so a wait for its API gives up at once with its log instead of at the timeout.
func (m *Member) exited() bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", m.PID()))
	if err != nil { // gone entirely, where /proc exists at all
		_, procErr := os.Stat("/proc/self/stat")
		return procErr == nil && errors.Is(err, fs.ErrNotExist)
	}
	// The state follows the parenthesised command name: "pid (comm) S …".
	i := bytes.LastIndexByte(stat, ')')
	return i > 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// Kill ends the process with SIGKILL: no drain, no clean stop, leases left to expire.
func (m *Member) Kill(t testing.TB) { t.Helper(); m.Proc.Signal(t, syscall.SIGKILL) }

// Pause freezes the process (SIGSTOP) as a long GC pause or a partition would.
func (m *Member) Pause(t testing.TB) { t.Helper(); m.Proc.Signal(t, syscall.SIGSTOP) }

// Resume lets a paused process go on (SIGCONT).
func (m *Member) Resume(t testing.TB) { t.Helper(); m.Proc.Signal(t, syscall.SIGCONT) }

// Term asks for a graceful shutdown (SIGTERM); a second Term skips the grace.
func (m *Member) Term(t testing.TB) { t.Helper(); m.Proc.Signal(t, syscall.SIGTERM) }

// Wait waits for the process to exit.
func (m *Member) Wait(t testing.TB) Result { t.Helper(); return m.Proc.Wait(t) }

// Stderr is what the process logged so far.
func (m *Member) Stderr() string { return m.Proc.Stderr() }

// Do sends a request with the member's token; body is JSON-encoded unless it is nil or
// already []byte. It answers the status and the raw body; a transport error is returned
// (a cut or paused member is something tests expect).
func (m *Member) Do(method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return 0, nil, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, m.URL+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+m.Config.Token)
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// MustDo is Do that fails the test on a transport error and decodes a JSON answer into
// out (when out is not nil and the body is not empty).
func (m *Member) MustDo(t testing.TB, method, path string, body, out any) int {
	t.Helper()
	status, data, err := m.Do(method, path, body)
	if err != nil {
		t.Fatalf("%s %s %s: %v", m.Name, method, path, err)
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s %s: answer %d is not JSON: %v\n%s", m.Name, method, path, status, err, data)
		}
	}
	return status
}

// Submit posts a run and answers the status with the decoded body.
func (m *Member) Submit(t testing.TB, req SubmitRequest) (int, Submitted) {
	t.Helper()
	var out Submitted
	status := m.MustDo(t, http.MethodPost, "/v1/runs", req, &out)
	return status, out
}

// MustSubmit posts a run that must be accepted (202) and returns its id.
func (m *Member) MustSubmit(t testing.TB, req SubmitRequest) string {
	t.Helper()
	status, out := m.Submit(t, req)
	if status != http.StatusAccepted || out.RunID == "" {
		t.Fatalf("%s: submit answered %d %+v", m.Name, status, out.Error)
	}
	return out.RunID
}

// GetRun reads a run (200 required).
func (m *Member) GetRun(t testing.TB, id string) RunResource {
	t.Helper()
	var r RunResource
	if status := m.MustDo(t, http.MethodGet, "/v1/runs/"+id, nil, &r); status != http.StatusOK {
		t.Fatalf("%s: GET run %s answered %d", m.Name, id, status)
	}
	return r
}

// Cancel asks the member to cancel a run and answers the status (200 or 202).
func (m *Member) Cancel(t testing.TB, id string) int {
	t.Helper()
	return m.MustDo(t, http.MethodPost, "/v1/runs/"+id+"/cancel", nil, nil)
}

// Ready reads /readyz: its status and body. A transport error fails the test.
func (m *Member) Ready(t testing.TB) (int, Readiness) {
	t.Helper()
	var r Readiness
	status := m.MustDo(t, http.MethodGet, "/readyz", nil, &r)
	return status, r
}

// Cluster is a set of members sharing one history.
type Cluster struct {
	Members []*Member
}

// StartCluster starts n members with cfg (Cluster set, one token for all), each on its
// own port, and waits until every one is ready and lists all n. edit, when not nil,
// adjusts member i's configuration first (another history URL through a proxy, other
// pools).
func StartCluster(t testing.TB, n int, cfg MemberConfig, edit func(i int, c *MemberConfig)) *Cluster {
	t.Helper()
	if cfg.History == "" {
		t.Fatal("StartCluster: MemberConfig.History is required")
	}
	cfg.Cluster = true
	if cfg.Token == "" {
		cfg.Token = "e2e-cluster-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	}
	c := &Cluster{}
	for i := range n {
		mc := cfg
		mc.Pools = append([]string(nil), cfg.Pools...)
		mc.Extra = append([]string(nil), cfg.Extra...)
		if edit != nil {
			edit(i, &mc)
		}
		c.Members = append(c.Members, StartMember(t, fmt.Sprintf("m%d", i), mc))
	}
	for _, m := range c.Members {
		m.WaitReady(t, 30*time.Second)
	}
	c.WaitInstances(t, n, 30*time.Second)
	for _, m := range c.Members {
		m.InstanceID(t) // known from now on, whatever happens to the member
	}
	return c
}

// Get reads a run from the first member that answers; ok is false when none does.
func (c *Cluster) Get(id string) (RunResource, bool) { return c.tryGet(id) }

// tryGet reads a run from the first member that answers.
func (c *Cluster) tryGet(id string) (RunResource, bool) {
	for _, m := range c.Members {
		status, data, err := m.Do(http.MethodGet, "/v1/runs/"+id, nil)
		if err != nil || status != http.StatusOK {
			continue
		}
		var r RunResource
		if json.Unmarshal(data, &r) == nil {
			return r, true
		}
	}
	return RunResource{}, false
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

// InstanceID is the member's instance id, as its own /readyz lists it (the member whose
// listen address is this one's).
func (m *Member) InstanceID(t testing.TB) string {
	t.Helper()
	if m.instanceID != "" {
		return m.instanceID
	}
	var (
		status int
		data   []byte
		err    error
	)
	poll(t, time.Now().Add(30*time.Second), func() bool {
		status, data, err = m.Do(http.MethodGet, "/readyz", nil)
		var r Readiness
		if err == nil && json.Unmarshal(data, &r) == nil {
			for _, mm := range r.Cluster.Members {
				if mm.Listen == m.Config.Listen {
					m.instanceID = mm.InstanceID
				}
			}
		}
		return m.instanceID != ""
	}, func() string {
		return fmt.Sprintf("%s: /readyz does not list itself (status %d, err %v): %s", m.Name, status, err, data)
	})
	return m.instanceID
}

// InFlight is the in_flight count the member reports for itself in /readyz, or -1 when
// it does not answer.
func (m *Member) InFlight() int {
	_, data, err := m.Do(http.MethodGet, "/readyz", nil)
	var r Readiness
	if err != nil || json.Unmarshal(data, &r) != nil {
		return -1
	}
	for _, mm := range r.Cluster.Members {
		if mm.Listen == m.Config.Listen {
			return mm.InFlight
		}
	}
	return -1
}

// Metrics is the member's /metrics text.
func (m *Member) Metrics(t testing.TB) string {
	t.Helper()
	status, data, err := m.Do(http.MethodGet, "/metrics", nil)
	if err != nil || status != http.StatusOK {
		t.Fatalf("%s: /metrics answered %d, err %v", m.Name, status, err)
	}
	return string(data)
}

// Logs parses the member's stderr so far.
func (m *Member) Logs() []LogLine { return ParseLogs(m.Stderr()) }

// Add starts one more member into the cluster with the cluster's shared settings (its
// first member's), adjusted by edit.
func (c *Cluster) Add(t testing.TB, edit func(cfg *MemberConfig)) *Member {
	t.Helper()
	if len(c.Members) == 0 {
		t.Fatal("Cluster.Add: the cluster has no member to copy settings from")
	}
	cfg := c.Members[0].Config
	cfg.Listen, cfg.DataDir = "", ""
	cfg.Pools = append([]string(nil), cfg.Pools...)
	cfg.Extra = append([]string(nil), cfg.Extra...)
	if edit != nil {
		edit(&cfg)
	}
	m := StartMember(t, fmt.Sprintf("m%d", len(c.Members)), cfg)
	m.WaitReady(t, 30*time.Second)
	m.InstanceID(t)
	c.Members = append(c.Members, m)
	return m
}

// ByInstance returns the member with that instance id, or nil.
func (c *Cluster) ByInstance(t testing.TB, id string) *Member {
	t.Helper()
	for _, m := range c.Members {
		if m.InstanceID(t) == id {
			return m
		}
	}
	return nil
}

// TestRoot is the directory holding every t.TempDir() of the test: the servers a test
// starts allow their connectors there (--allow-path), while their data directories,
// inside it, stay closed (SPEC §14.1).
func TestRoot(t testing.TB) string {
	t.Helper()
	return filepath.Dir(t.TempDir())
}
