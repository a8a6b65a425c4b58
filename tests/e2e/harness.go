package e2e

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Environment variables the harness reads.
const (
	EnvBin  = "SLUICE_E2E_BIN"  // a prebuilt binary; the harness builds one when unset
	EnvRows = "SLUICE_E2E_ROWS" // row count of data-moving tests (CI: 100k)
	EnvRuns = "SLUICE_E2E_RUNS" // run count of the chaos test (default 200; 1,000 locally)
)

const module = "github.com/sluicehq/sluice"

// Main builds the binary unless SLUICE_E2E_BIN names one, runs the tests and removes
// what it built. Call it from TestMain. The path is handed to the tests through the
// process environment, so the harness keeps no package state.
func Main(m *testing.M) {
	os.Exit(mainCode(m))
}

func mainCode(m *testing.M) int {
	if os.Getenv(EnvBin) == "" {
		dir, err := os.MkdirTemp("", "sluice-e2e-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			return 1
		}
		defer os.RemoveAll(dir)
		bin := filepath.Join(dir, "sluice")
		// Built without -race whatever the test binary uses: e2e measures the product.
		cmd := exec.Command("go", "build", "-o", bin, module)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		start := time.Now()
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: building sluice failed:", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "e2e: built %s in %s\n", bin, time.Since(start).Round(time.Millisecond))
		if err := os.Setenv(EnvBin, bin); err != nil {
			fmt.Fprintln(os.Stderr, "e2e:", err)
			return 1
		}
	}
	return m.Run()
}

// Bin is the sluice binary under test.
func Bin(t testing.TB) string {
	t.Helper()
	bin := os.Getenv(EnvBin)
	if bin == "" {
		t.Fatalf("%s is not set: call e2e.Main from TestMain", EnvBin)
	}
	return bin
}

// Rows is SLUICE_E2E_ROWS, or def when unset.
func Rows(t testing.TB, def int) int {
	t.Helper()
	return positiveEnv(t, EnvRows, def)
}

// Runs is SLUICE_E2E_RUNS, or def when unset.
func Runs(t testing.TB, def int) int {
	t.Helper()
	return positiveEnv(t, EnvRuns, def)
}

func positiveEnv(t testing.TB, name string, def int) int {
	t.Helper()
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q is not a positive integer", name, v)
	}
	return n
}

// Cmd is one invocation of the binary.
type Cmd struct {
	Args []string
	// Env is added to the environment; the parent's SLUICE_* variables are never passed
	// on, so a developer's shell cannot change what a test sees.
	Env     map[string]string
	Dir     string
	Stdin   string
	Timeout time.Duration // default 2 minutes
}

// Result is what a finished invocation left.
type Result struct {
	Code   int
	Stdout string
	Stderr string
}

// String is for assertion messages.
func (r Result) String() string {
	return fmt.Sprintf("exit %d\n--- stdout\n%s\n--- stderr\n%s", r.Code, r.Stdout, r.Stderr)
}

// Run runs the binary to its end.
func Run(t testing.TB, c Cmd) Result {
	t.Helper()
	p := Start(t, c)
	return p.Wait(t)
}

// Process is a running invocation.
type Process struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	cancel         context.CancelFunc
}

// Start starts the binary and returns at once.
func Start(t testing.TB, c Cmd) *Process {
	t.Helper()
	timeout := c.Timeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	cmd := exec.CommandContext(ctx, Bin(t), c.Args...)
	cmd.Dir = c.Dir
	cmd.Env = environ(c.Env)
	cmd.Stdin = strings.NewReader(c.Stdin)
	p := &Process{cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, cancel: cancel}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start sluice: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
	})
	return p
}

// Signal sends sig to the process.
func (p *Process) Signal(t testing.TB, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
}

// Stderr is what the process has written to stderr so far.
func (p *Process) Stderr() string { return p.stderr.String() }

// Stdout is what the process has written to stdout so far.
func (p *Process) Stdout() string { return p.stdout.String() }

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Wait waits for the process to end and returns its result.
func (p *Process) Wait(t testing.TB) Result {
	t.Helper()
	err := p.cmd.Wait()
	p.cancel()
	res := Result{Stdout: p.stdout.String(), Stderr: p.stderr.String()}
	var exit *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &exit):
		res.Code = exit.ExitCode()
	default:
		t.Fatalf("wait for sluice: %v\n%s", err, res)
	}
	return res
}

// syncBuffer lets a test read output while the process is still writing it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

func environ(extra map[string]string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "SLUICE_") {
			continue
		}
		env = append(env, kv)
	}
	for k, v := range extra {
		env = append(env, k+"="+v)
	}
	return env
}
