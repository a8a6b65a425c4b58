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
	"reflect"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The `sluice serve` process of the serve suite, its keep-alive API client, and the
// submitting and polling done through it.

// submitted is what submitAll saw: every round trip, and the submissions refused.
type submitted struct {
	took         []time.Duration
	refused      int
	firstRefusal string
}

// submitAll posts n runs with clients concurrent clients. A refusal (any answer but 202)
// is counted and the submitting goes on, so an overloaded history shows as a count in
// the table; a broken connection ends it.
func submitAll(ctx context.Context, srv *serveProc, n, clients int, body func(int) ([]byte, error)) (submitted, error) {
	took := make([]time.Duration, n)
	var next atomic.Int64
	var mu sync.Mutex
	var out submitted
	var wg sync.WaitGroup
	errs := make([]error, clients)
	for w := range clients {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				b, err := body(i)
				if err != nil {
					errs[w] = err
					return
				}
				start := time.Now()
				status, data, err := srv.do(ctx, http.MethodPost, "/v1/runs", b)
				took[i] = time.Since(start)
				if err != nil {
					errs[w] = err
					return
				}
				if status != http.StatusAccepted {
					mu.Lock()
					out.refused++
					if out.firstRefusal == "" {
						out.firstRefusal = fmt.Sprintf("%d %s", status, serveTrim(string(data)))
					}
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return out, err
		}
	}
	out.took = took
	return out, ctx.Err()
}

// idlePickups submits n runs one at a time, each once the previous one ended, and
// returns their pickup latencies: with nothing queued, this is how soon the claim loop
// wakes for a new run.
func idlePickups(ctx context.Context, srv *serveProc, n int, body func(int) ([]byte, error)) ([]time.Duration, error) {
	var out []time.Duration
	for i := range n {
		b, err := body(i)
		if err != nil {
			return nil, err
		}
		status, data, err := srv.do(ctx, http.MethodPost, "/v1/runs", b)
		if err != nil {
			return nil, err
		}
		var sub struct {
			RunID string `json:"run_id"`
		}
		if status != http.StatusAccepted || json.Unmarshal(data, &sub) != nil {
			return nil, fmt.Errorf("POST /v1/runs answered %d: %s", status, serveTrim(string(data)))
		}
		deadline := time.Now().Add(serveRunTimeout)
		for {
			var r serveRun
			status, data, err := srv.do(ctx, http.MethodGet, "/v1/runs/"+sub.RunID, nil)
			if err != nil {
				return nil, err
			}
			if status != http.StatusOK || json.Unmarshal(data, &r) != nil {
				return nil, fmt.Errorf("GET /v1/runs/%s answered %d: %s", sub.RunID, status, serveTrim(string(data)))
			}
			if r.terminal() {
				if r.CreatedAt != nil && r.ClaimedAt != nil {
					out = append(out, r.ClaimedAt.Sub(*r.CreatedAt))
				}
				break
			}
			if time.Now().After(deadline) {
				return nil, fmt.Errorf("run %s is still %s after %s", sub.RunID, r.Status, serveRunTimeout)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	return out, nil
}

// serveRun is the part of the API's run resource the suite reads.
type serveRun struct {
	RunID      string     `json:"run_id"`
	Status     string     `json:"status"`
	CreatedAt  *time.Time `json:"created_at"`
	ClaimedAt  *time.Time `json:"claimed_at"`
	FinishedAt *time.Time `json:"finished_at"`
	Error      *struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (r serveRun) terminal() bool {
	return r.Status == "completed" || r.Status == "failed" || r.Status == "cancelled"
}

type serveList struct {
	Runs       []serveRun `json:"runs"`
	NextCursor *string    `json:"next_cursor"`
}

// waitIdle polls the list for runs not yet terminal until there are none.
func (s *serveProc) waitIdle(ctx context.Context, deadline time.Time) error {
	for {
		page, err := s.list(ctx, url.Values{"status": {"queued,pending,running,sharded"}, "limit": {"1"}})
		if err != nil {
			return err
		}
		if len(page.Runs) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("runs are still %s after %s", page.Runs[0].Status, serveRunTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(servePollEvery):
		}
	}
}

// listAll reads every run through the paginated list.
func (s *serveProc) listAll(ctx context.Context) ([]serveRun, error) {
	var out []serveRun
	q := url.Values{"limit": {strconv.Itoa(servePageLimit)}}
	for {
		page, err := s.list(ctx, q)
		if err != nil {
			return nil, err
		}
		out = append(out, page.Runs...)
		if page.NextCursor == nil || *page.NextCursor == "" {
			return out, nil
		}
		q.Set("cursor", *page.NextCursor)
	}
}

func (s *serveProc) list(ctx context.Context, q url.Values) (serveList, error) {
	var page serveList
	status, data, err := s.do(ctx, "GET", "/v1/runs?"+q.Encode(), nil)
	if err != nil {
		return page, err
	}
	if status != 200 {
		return page, fmt.Errorf("GET /v1/runs answered %d: %s", status, serveTrim(string(data)))
	}
	if err := json.Unmarshal(data, &page); err != nil {
		return page, fmt.Errorf("GET /v1/runs: %w", err)
	}
	return page, nil
}

// serveProc is one `sluice serve` process and a keep-alive client of its API.
type serveProc struct {
	addr   string
	cmd    *exec.Cmd
	stderr bytes.Buffer // read only once the process has exited
	done   chan struct{}
	client *http.Client
}

// startServeProc starts the server on a free loopback port and waits until /readyz
// answers 200.
func startServeProc(ctx context.Context, bin, dir, history string, slots int) (*serveProc, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	s := &serveProc{addr: addr, done: make(chan struct{}), client: &http.Client{Timeout: time.Minute,
		Transport: &http.Transport{MaxIdleConnsPerHost: 2 * serveClients, DisableCompression: true}}}
	// Not CommandContext: the server is stopped by SIGTERM, so its rusage is a clean exit's.
	s.cmd = exec.Command(bin, "serve", "--history", history, "--data-dir", dir, "--listen", addr,
		"--auth-token", serveToken, "--max-concurrent-runs", strconv.Itoa(slots), "--log-level", "warn")
	s.cmd.Dir = dir
	s.cmd.Stdout = nil // the runs' rows: the null device
	s.cmd.Stderr = &s.stderr
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start sluice serve: %w", err)
	}
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	deadline := time.Now().Add(serveStartup)
	for {
		status, _, err := s.do(ctx, http.MethodGet, "/readyz", nil)
		if err == nil && status == http.StatusOK {
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("sluice serve exited while starting: %s", serveTrim(s.stderr.String()))
		case <-ctx.Done():
			_, _ = s.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			_, _ = s.stop()
			return nil, fmt.Errorf("sluice serve is not ready after %s: %s", serveStartup, serveTrim(s.stderr.String()))
		}
	}
}

func (s *serveProc) do(ctx context.Context, method, path string, body []byte) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+s.addr+path, rd)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+serveToken)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	return resp.StatusCode, data, err
}

// stop sends SIGTERM (the drain finds nothing running), waits, and returns the peak RSS
// in KiB from the exited process's rusage (-1 where the platform has none). A server that
// does not exit within a minute is killed and reported.
func (s *serveProc) stop() (int64, error) {
	s.client.CloseIdleConnections()
	var err error
	select {
	case <-s.done:
	default:
		_ = s.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-s.done:
		case <-time.After(time.Minute):
			_ = s.cmd.Process.Kill()
			<-s.done
			err = errors.New("sluice serve did not exit within a minute of SIGTERM")
		}
	}
	if err == nil && !s.cmd.ProcessState.Success() {
		err = fmt.Errorf("sluice serve exited with %s: %s", s.cmd.ProcessState, serveTrim(s.stderr.String()))
	}
	return maxRSSKiB(s.cmd.ProcessState), err
}

// maxRSSKiB reads ru_maxrss through reflection: the field exists on the unix rusage only,
// and this keeps the package building on every platform without files per OS.
func maxRSSKiB(ps *os.ProcessState) int64 {
	v := reflect.ValueOf(ps.SysUsage())
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return -1
	}
	f := v.Elem().FieldByName("Maxrss")
	if !f.IsValid() || !f.CanInt() {
		return -1
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return f.Int() / 1024 // bytes there
	}
	return f.Int()
}
