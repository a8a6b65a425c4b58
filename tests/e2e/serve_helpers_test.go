package e2e_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun/driver/sqliteshim"

	"github.com/sluicehq/sluice/tests/e2e"
)

// serveUp is how long a server may take to answer /readyz after it was started.
const serveUp = 30 * time.Second

// freeAddr is a loopback address nothing listens on right now.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	require.NoError(t, ln.Close())
	return addr
}

// listeningOn finds the bound address in serve's JSON log.
var listeningOn = regexp.MustCompile(`"msg":"sluice serve listening".*?"address":"http://([^"]+)"`)

// server is one `sluice serve` process on a loopback port.
type server struct {
	*e2e.Process
	addr  string
	data  string
	token string
}

func (s *server) url() string { return "http://" + s.addr }

// startServe starts `sluice serve --listen <free port> --data-dir data args…` and waits
// until /readyz answers 200. The token is read from the data directory when serve
// generated one.
func startServe(t *testing.T, data string, env map[string]string, args ...string) *server {
	t.Helper()
	// Port 0, read back from the log: a port picked here and closed again can be bound by
	// a parallel test's server first, and this test would then talk to that one.
	s := &server{data: data}
	all := append([]string{"serve", "--listen", "127.0.0.1:0", "--data-dir", data, "--lease-ttl-secs", "3", "--cluster-poll-secs", "1"}, args...)
	if !slices.Contains(args, "--allow-path") {
		all = append(all, "--allow-path", e2e.TestRoot(t))
	}
	s.Process = e2e.Start(t, e2e.Cmd{Args: all, Env: env, Timeout: 3 * time.Minute})
	require.Eventually(t, func() bool {
		if s.addr == "" {
			m := listeningOn.FindStringSubmatch(s.Stderr())
			if m == nil {
				return false
			}
			s.addr = m[1]
		}
		code, _ := s.call(t, "GET", "/readyz", "", nil)
		return code == http.StatusOK
	}, serveUp, 25*time.Millisecond, "serve did not become ready:\n%s", s.Stderr())
	if raw, err := os.ReadFile(filepath.Join(data, "auth-token")); err == nil {
		s.token = strings.TrimSpace(string(raw))
	}
	return s
}

// call sends one request; code 0 means the server did not answer.
func (s *server) call(t *testing.T, method, path, token string, body []byte) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, s.url()+path, bytes.NewReader(body))
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	// The timeout only keeps a hung server from hanging the suite: a 900 KB submit on a
	// machine running two race-enabled suites at once took more than the 10 s it used to be.
	client := &http.Client{Timeout: time.Minute}
	resp, err := client.Do(req)
	if err != nil {
		// Code 0: no answer (some tests expect a refused or closed connection); say why.
		t.Logf("%s %s: no answer: %v", method, path, err)
		return 0, nil
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, raw
}

// api is call with the server's token, decoding a JSON answer into out (when non-nil).
func (s *server) api(t *testing.T, method, path string, body any, out any) int {
	t.Helper()
	var raw []byte
	if body != nil {
		var err error
		raw, err = json.Marshal(body)
		require.NoError(t, err)
	}
	code, resp := s.call(t, method, path, s.token, raw)
	if out != nil && len(resp) > 0 {
		require.NoError(t, json.Unmarshal(resp, out), string(resp))
	}
	return code
}

// stop sends SIGTERM and waits for a clean exit.
func (s *server) stop(t *testing.T) e2e.Result {
	t.Helper()
	s.Signal(t, syscall.SIGTERM)
	r := s.Wait(t)
	require.Equal(t, 0, r.Code, r.String())
	return r
}

// runResource is the part of the run resource the tests read.
type runResource struct {
	RunID    string            `json:"run_id"`
	Name     string            `json:"name"`
	Status   string            `json:"status"`
	Attempt  int               `json:"attempt"`
	Labels   map[string]string `json:"labels"`
	Attempts []struct {
		N       int    `json:"n"`
		Outcome string `json:"outcome"`
	} `json:"attempts"`
	Stats struct {
		RowsRead    int64 `json:"rows_read"`
		RowsWritten int64 `json:"rows_written"`
		Pages       int64 `json:"pages"`
	} `json:"stats"`
	Error *struct{ Code, Message string } `json:"error"`
}

type apiError struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
		Details struct {
			Errors []struct {
				Path    string `json:"path"`
				Message string `json:"message"`
			} `json:"errors"`
		} `json:"details"`
	} `json:"error"`
}

// submit posts a run and returns its id.
func (s *server) submit(t *testing.T, req map[string]any) string {
	t.Helper()
	var out struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
	}
	code := s.api(t, "POST", "/v1/runs", req, &out)
	require.Equal(t, http.StatusAccepted, code, "submit answered %d", code)
	require.NotEmpty(t, out.RunID)
	return out.RunID
}

func (s *server) get(t *testing.T, id string) runResource {
	t.Helper()
	var r runResource
	code := s.api(t, "GET", "/v1/runs/"+id, nil, &r)
	require.Equal(t, http.StatusOK, code)
	return r
}

// waitStatus waits until run id has status want and returns it.
func (s *server) waitStatus(t *testing.T, id, want string, within time.Duration) runResource {
	t.Helper()
	var last runResource
	require.Eventually(t, func() bool {
		last = s.get(t, id)
		return last.Status == want
	}, within, 50*time.Millisecond, "run %s did not become %s", id, want)
	return last
}

// generateConfig is a pipeline of count generated rows into a SQLite table; rate 0 is
// as fast as possible.
func generateConfig(name, db string, count, rate, batch int, extra string) string {
	rateText := ""
	if rate > 0 {
		rateText = fmt.Sprintf(", rate: %d", rate)
	}
	return fmt.Sprintf(`version: 1
name: %s
%spipeline:
  source: { type: generate, config: { count: %d, batch_size: %d%s } }
  sink:
    type: sqlite
    config: { connection_url: "sqlite:%s", table_name: rows, write_mode: append, create_table: true }
`, name, extra, count, batch, rateText, db)
}

// tableCount counts the rows of the sink table, 0 while it does not exist yet.
func tableCount(t *testing.T, db string) int {
	t.Helper()
	if _, err := os.Stat(db); err != nil {
		return 0
	}
	conn, err := sql.Open(sqliteshim.ShimName, db)
	require.NoError(t, err)
	defer conn.Close()
	var n int
	if err := conn.QueryRow(`SELECT COUNT(*) FROM rows`).Scan(&n); err != nil {
		return 0
	}
	return n
}
