package e2e_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/testdb"
)

// histories are the two dialects a hostile request must not reach as a 500.
var histories = []struct {
	name    string
	history func(t *testing.T, dir string) string
}{
	{"sqlite", func(_ *testing.T, dir string) string { return "sqlite:" + filepath.Join(dir, "history.db") }},
	{"postgres", func(t *testing.T, _ string) string { return testdb.Postgres(t) }},
}

// onEachHistory runs check against a server on each dialect's history, in parallel.
func onEachHistory(t *testing.T, check func(t *testing.T, s *server, dir string), args ...string) {
	for _, tc := range histories {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := startServe(t, filepath.Join(dir, "data"), nil, append([]string{"--history", tc.history(t, dir)}, args...)...)
			check(t, s, dir)
		})
	}
}

// errorAnswer is the error body with the field a 400 names.
type errorAnswer struct {
	Error struct {
		Code    string         `json:"code"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	} `json:"error"`
}

func decodeError(t *testing.T, raw []byte) errorAnswer {
	t.Helper()
	var e errorAnswer
	require.NoError(t, json.Unmarshal(raw, &e), string(raw))
	return e
}

// TestLabelFiltersAreCapped: 1,000 label filters are refused with a 400 naming the
// parameter before any SQL (SQLite answered 500 "Expression tree is too large", PostgreSQL
// planned for minutes), and 20 filters — the cap — still find the run carrying them.
func TestLabelFiltersAreCapped(t *testing.T) {
	t.Parallel()
	onEachHistory(t, func(t *testing.T, s *server, dir string) {
		labels := map[string]string{}
		for i := range 20 {
			labels[fmt.Sprintf("k%d", i)] = "v"
		}
		id := s.submit(t, map[string]any{"config": generateConfig("labelled", filepath.Join(dir, "dst.db"), 10, 0, 10, ""), "labels": labels})

		q := url.Values{}
		for i := range 1000 {
			q.Add("label", fmt.Sprintf("k%d=v", i))
		}
		code, raw := s.call(t, "GET", "/v1/runs?"+q.Encode(), s.token, nil)
		require.Equal(t, http.StatusBadRequest, code, string(raw))
		e := decodeError(t, raw)
		require.Equal(t, "invalid_body", e.Error.Code)
		require.Contains(t, e.Error.Message, "query parameter label is given 1000 times: at most 20 are allowed")

		q = url.Values{}
		for k, v := range labels {
			q.Add("label", k+"="+v)
		}
		var page struct {
			Runs []runResource `json:"runs"`
		}
		require.Equal(t, http.StatusOK, s.api(t, "GET", "/v1/runs?"+q.Encode(), nil, &page))
		require.Len(t, page.Runs, 1)
		require.Equal(t, id, page.Runs[0].RunID)
		q.Set("label", "k0=other")
		require.Equal(t, http.StatusOK, s.api(t, "GET", "/v1/runs?"+q.Encode(), nil, &page))
		require.Empty(t, page.Runs)
	})
}

// TestNULMatrix drives every route of the OpenAPI document: a NUL byte in each of its
// path and query parameters, and in a JSON body, answers 400 naming the field — never a
// 500 — on both dialects. New routes are covered as soon as the document lists them.
func TestNULMatrix(t *testing.T) {
	t.Parallel()
	onEachHistory(t, func(t *testing.T, s *server, dir string) {
		var doc struct {
			Paths map[string]map[string]struct {
				Parameters []struct {
					Name string `json:"name"`
					In   string `json:"in"`
				} `json:"parameters"`
				RequestBody any `json:"requestBody"`
			} `json:"paths"`
		}
		require.Equal(t, http.StatusOK, s.api(t, "GET", "/v1/openapi.json", nil, &doc))
		pathParam := regexp.MustCompile(`\{([a-z_]+)\}`)
		cases := 0
		for _, path := range slices.Sorted(mapKeys(doc.Paths)) {
			for method, op := range doc.Paths[path] {
				method = strings.ToUpper(method)
				fill := func(bad string) string {
					return pathParam.ReplaceAllStringFunc(path, func(m string) string {
						if m[1:len(m)-1] == bad {
							return "a%00b"
						}
						return "x"
					})
				}
				for _, p := range op.Parameters {
					if p.In == "header" {
						// A header value cannot carry a NUL on the wire (Go's client refuses
						// to send one); the header's own format check covers it.
						continue
					}
					target := fill(p.Name)
					if p.In == "query" {
						target = fill("") + "?" + p.Name + "=a%00b"
					}
					code, raw := s.call(t, method, target, s.token, nil)
					require.Equal(t, http.StatusBadRequest, code, "%s %s: %s", method, target, raw)
					require.Equal(t, p.Name, decodeError(t, raw).Error.Details["field"], "%s %s", method, target)
					cases++
				}
				if op.RequestBody != nil && path != "/mcp" {
					code, raw := s.call(t, method, fill(""), s.token, []byte(`{"name": "a\u0000b"}`))
					require.Equal(t, http.StatusBadRequest, code, "%s %s with a NUL in the body: %s", method, path, raw)
					cases++
				}
			}
		}
		require.Greater(t, cases, 40, "the document lists the routes")
	})
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// TestSlowBodies: a tokenless request declaring a 200,000-byte body and sending one byte
// gets its 401 at once, on a connection the server then closes (the body used to be
// drained before the 401, so the answer waited for all of it); an authenticated one that
// trickles its body is cut off by --read-timeout-secs with a 408.
func TestSlowBodies(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServe(t, filepath.Join(dir, "data"), nil, "--read-timeout-secs", "2")

	status := func(t *testing.T, token string, trickle bool) (string, error) {
		conn, err := net.Dial("tcp", s.addr)
		require.NoError(t, err)
		defer conn.Close()
		// A safety net so a regression fails instead of hanging; the answer is expected
		// long before it.
		require.NoError(t, conn.SetReadDeadline(time.Now().Add(60*time.Second)))
		head := "POST /v1/runs HTTP/1.1\r\nHost: " + s.addr + "\r\nContent-Type: application/json\r\nContent-Length: 200000\r\n"
		if token != "" {
			head += "Authorization: Bearer " + token + "\r\n"
		}
		_, err = conn.Write([]byte(head + "\r\n{"))
		require.NoError(t, err)
		stop := make(chan struct{})
		defer close(stop)
		if trickle {
			go func() {
				tick := time.NewTicker(200 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-stop:
						return
					case <-tick.C:
						if _, err := conn.Write([]byte(" ")); err != nil {
							return
						}
					}
				}
			}()
		}
		r := bufio.NewReader(conn)
		line, err := r.ReadString('\n')
		if err != nil {
			return "", err
		}
		resp, err := http.ReadResponse(bufio.NewReader(strings.NewReader(line+readRest(r))), nil)
		if err != nil {
			return strings.TrimSpace(line), nil
		}
		require.True(t, resp.Close, "the server closes the connection after answering")
		return strings.TrimSpace(line), nil
	}

	line, err := status(t, "", false)
	require.NoError(t, err)
	require.Equal(t, "HTTP/1.1 401 Unauthorized", line)

	line, err = status(t, s.token, true)
	require.NoError(t, err)
	require.Equal(t, "HTTP/1.1 408 Request Timeout", line)
}

// readRest reads what the server sends until it closes the connection.
func readRest(r *bufio.Reader) string {
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

// peakRSS is the process's peak resident set (VmHWM) in bytes.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			_, err := fmt.Sscanf(strings.TrimSpace(v), "%d kB", &kb)
			require.NoError(t, err)
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc status")
	return 0
}

// TestDeepConfigIsRefusedCheaply: an 18 KB config of lists nested 9,000 deep — as a YAML
// body, as config text in JSON, and as a nested JSON body — is refused with a 422 naming
// the limit, and the server's peak memory grows by less than 20 MB (it used to grow by
// over 130 MB for one such request).
func TestDeepConfigIsRefusedCheaply(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServe(t, filepath.Join(dir, "data"), nil)
	before := peakRSS(t, s.Pid())
	deep := "version: 1\nname: deep\npipeline: " + strings.Repeat("[", 9000) + strings.Repeat("]", 9000) + "\n"
	send := func(contentType string, body []byte) (int, []byte) {
		req, err := http.NewRequest("POST", s.url()+"/v1/runs", strings.NewReader(string(body)))
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+s.token)
		req.Header.Set("Content-Type", contentType)
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, raw
	}
	for name, tc := range map[string]struct {
		contentType string
		body        []byte
	}{
		"yaml body":   {"application/yaml", []byte(deep)},
		"config text": {"application/json", mustJSON(t, map[string]any{"config": deep})},
		"json body":   {"application/json", []byte(`{"config": {"pipeline": ` + strings.Repeat(`{"a":`, 9000) + "1" + strings.Repeat("}", 9000) + "}}")},
	} {
		code, raw := send(tc.contentType, tc.body)
		require.Equal(t, http.StatusUnprocessableEntity, code, "%s: %s", name, raw)
		e := decodeError(t, raw)
		require.Equal(t, "invalid_config", e.Error.Code, name)
		require.Contains(t, e.Error.Message, "nests deeper than 64 levels", name)
	}
	http.DefaultClient.CloseIdleConnections()
	grew := peakRSS(t, s.Pid()) - before
	t.Logf("peak RSS grew by %d KiB", grew>>10)
	require.Less(t, grew, int64(20<<20))
}

// TestQueueLimitIsExactUnderConcurrentSubmits: 32 clients submitting at once never get
// more than --max-queued-runs runs pending (it used to accept 117 of a limit of 100: each
// submit counted before the others inserted).
func TestQueueLimitIsExactUnderConcurrentSubmits(t *testing.T) {
	t.Parallel()
	onEachHistory(t, func(t *testing.T, s *server, dir string) {
		// One slow run holds the only slot, so the rest stay pending.
		cfg := generateConfig("queued", filepath.Join(dir, "dst.db"), 100000, 1, 1, "")
		body := mustJSON(t, map[string]any{"config": cfg})
		var wg sync.WaitGroup
		var accepted, full atomic.Int64
		for range 32 {
			wg.Go(func() {
				client := &http.Client{Timeout: 30 * time.Second}
				for range 5 {
					req, _ := http.NewRequest("POST", s.url()+"/v1/runs", bytes.NewReader(body))
					req.Header.Set("Authorization", "Bearer "+s.token)
					req.Header.Set("Content-Type", "application/json")
					resp, err := client.Do(req)
					if err != nil {
						continue
					}
					_, _ = io.Copy(io.Discard, resp.Body)
					_ = resp.Body.Close()
					switch resp.StatusCode {
					case http.StatusAccepted:
						accepted.Add(1)
					case http.StatusTooManyRequests:
						full.Add(1)
					}
				}
			})
		}
		wg.Wait()
		require.Equal(t, int64(160), accepted.Load()+full.Load(), "every submit answered 202 or 429")
		var page struct {
			Runs []runResource `json:"runs"`
		}
		require.Equal(t, http.StatusOK, s.api(t, "GET", "/v1/runs?limit=500", nil, &page))
		waiting := 0
		for _, r := range page.Runs {
			if r.Status == "pending" || r.Status == "queued" {
				waiting++
			}
		}
		t.Logf("accepted %d, refused %d, waiting %d of %d", accepted.Load(), full.Load(), waiting, len(page.Runs))
		require.Equal(t, int(accepted.Load()), len(page.Runs))
		require.LessOrEqual(t, waiting, 100, "never more than --max-queued-runs waiting")
		require.LessOrEqual(t, int(accepted.Load()), 100+len(page.Runs)-waiting, "only runs that left the queue made room")
	}, "--max-queued-runs", "100", "--max-concurrent-runs", "1")
}

// TestLongErrorsAreStoredClipped: a file source with a 900 KB path fails at open, and the run's
// stored error is at most 4 KiB with a truncation marker (it used to be the whole 900 KB,
// in every list answer that showed the run).
func TestLongErrorsAreStoredClipped(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := startServe(t, filepath.Join(dir, "data"), nil)
	// 900 KB of path under a directory that does not exist: the confinement resolves it
	// inside the allowed dir (its nearest existing parent is), and the open fails.
	comps := []string{dir, "missing"}
	for range 900_000 / 256 {
		comps = append(comps, strings.Repeat("p", 255))
	}
	path := filepath.Join(comps...) + ".csv"
	id := s.submit(t, map[string]any{"config": `version: 1
name: longpath
pipeline:
  source: { type: file, config: { path: "` + path + `" } }
  sink:
    type: sqlite
    config: { connection_url: "sqlite:` + filepath.Join(dir, "dst.db") + `", table_name: rows, write_mode: append, create_table: true }
`})
	// The bound only ends a hung run. Alone the run fails within half a second, but parsing
	// the 900 KB config twice (submit and claim), resolving the path and scrubbing the
	// message cost it about 0.2 s of CPU, and with two race-enabled CIs on two cores it
	// waited past 30 s for that CPU.
	r := s.waitStatus(t, id, "failed", 2*time.Minute)
	require.NotNil(t, r.Error)
	require.LessOrEqual(t, len(r.Error.Message), 4096)
	require.Regexp(t, `… \[truncated: \d+ bytes\]$`, r.Error.Message)
	// The run's log and the server's log carry the error clipped too (each had a 900 KB
	// "run failed" line).
	code, logs := s.call(t, "GET", "/v1/runs/"+id+"/logs", s.token, nil)
	require.Equal(t, http.StatusOK, code)
	require.Less(t, len(logs), 16<<10, "the run's log answer holds no 900 KB line")
	for _, line := range strings.Split(s.Stderr(), "\n") {
		require.Less(t, len(line), 16<<10, "a server log line of %d bytes: %.200s…", len(line), line)
	}
}
