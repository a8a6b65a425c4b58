package e2e

// Waiting on members and runs: every wait polls until its condition holds and fails the
// test with what it last saw once its bound has passed. The bounds are failures', sized
// for a loaded machine; no test asserts that something happened within one.

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// WaitLive waits until /livez answers 200.
func (m *Member) WaitLive(t testing.TB, within time.Duration) {
	t.Helper()
	m.waitStatus(t, "/livez", within)
}

// WaitReady waits until /readyz answers 200.
func (m *Member) WaitReady(t testing.TB, within time.Duration) {
	t.Helper()
	m.waitStatus(t, "/readyz", within)
}

func (m *Member) waitStatus(t testing.TB, path string, within time.Duration) {
	t.Helper()
	var last string
	poll(t, time.Now().Add(within), func() bool {
		if m.exited() {
			t.Fatalf("%s exited while waiting for %s:\n%s", m.Name, path, tail(m.Stderr(), 8<<10))
		}
		status, data, err := m.Do(http.MethodGet, path, nil)
		last = fmt.Sprintf("status %d %s err %v", status, data, err)
		// The API answers before the last start hooks ran; "serve started" says they all
		// did, so a signal the test sends next is a shutdown, not an interrupted start.
		return err == nil && status == http.StatusOK && strings.Contains(m.Stderr(), "serve started")
	}, func() string {
		return fmt.Sprintf("%s: %s did not answer 200 within %s (last: %s)\n%s", m.Name, path, within, last, tail(m.Stderr(), 8<<10))
	})
}

// WaitInstances waits until every member's /readyz lists n live instances.
func (c *Cluster) WaitInstances(t testing.TB, n int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for _, m := range c.Members {
		var (
			status int
			data   []byte
			err    error
		)
		poll(t, deadline, func() bool {
			status, data, err = m.Do(http.MethodGet, "/readyz", nil)
			var r Readiness
			return err == nil && json.Unmarshal(data, &r) == nil && r.Cluster.Instances == n
		}, func() string {
			return fmt.Sprintf("%s: /readyz does not list %d instances (status %d, err %v): %s", m.Name, n, status, err, data)
		})
	}
}

// WaitTerminal polls the runs through any answering member until each is terminal, and
// returns them by id.
func (c *Cluster) WaitTerminal(t testing.TB, ids []string, within time.Duration) map[string]RunResource {
	t.Helper()
	deadline := time.Now().Add(within)
	out := make(map[string]RunResource, len(ids))
	for _, id := range ids {
		var r RunResource
		poll(t, deadline, func() bool {
			var ok bool
			r, ok = c.tryGet(id)
			return ok && r.Terminal()
		}, func() string {
			return fmt.Sprintf("run %s is not terminal after %s (last status %q)", id, within, r.Status)
		})
		out[id] = r
	}
	return out
}

// WaitLog waits for the member's first log line whose message contains msg, and returns
// it; within only bounds a failure.
func (m *Member) WaitLog(t testing.TB, msg string, within time.Duration) LogLine {
	t.Helper()
	var found LogLine
	poll(t, time.Now().Add(within), func() bool {
		for _, l := range m.Logs() {
			if strings.Contains(l.Msg, msg) {
				found = l
				return true
			}
		}
		return false
	}, func() string { return fmt.Sprintf("%s: no log line says %q after %s", m.Name, msg, within) })
	return found
}

// WaitRun polls the run through m until ok accepts it, and returns it.
func (m *Member) WaitRun(t testing.TB, id string, within time.Duration, what string, ok func(RunResource) bool) RunResource {
	t.Helper()
	var last RunResource
	poll(t, time.Now().Add(within), func() bool {
		status, data, err := m.Do(http.MethodGet, "/v1/runs/"+id, nil)
		return err == nil && status == http.StatusOK && json.Unmarshal(data, &last) == nil && ok(last)
	}, func() string {
		return fmt.Sprintf("%s: run %s is not %s after %s (status %q, owner %+v, attempts %v)", m.Name, id, what, within,
			last.Status, last.Owner, last.Outcomes())
	})
	return last
}

// poll asks done every 20 ms until it answers true, and fails the test with why's words
// once the deadline has passed. The bound is a failure's, never a timing the test asserts.
func poll(t testing.TB, deadline time.Time, done func() bool, why func() string) {
	t.Helper()
	for !done() {
		if time.Now().After(deadline) {
			t.Fatal(why())
		}
		time.Sleep(20 * time.Millisecond)
	}
}
