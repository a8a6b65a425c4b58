package http_test

import (
	"bufio"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
)

func line(seq int64, msg string) runs.LogLine {
	return runs.LogLine{Seq: seq, At: t0.Add(time.Duration(seq) * time.Second), Level: "INFO", Message: msg}
}

func TestLogsPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var gotAfter int64
	var gotLimit int
	e.runs.logs = func(_ runs.Principal, _ string, after int64, limit int) (runs.LogPage, error) {
		gotAfter, gotLimit = after, limit
		l := line(4, "page 1 written")
		l.Attrs = map[string]any{"rows": 10}
		return runs.LogPage{Lines: []runs.LogLine{l}, Next: 4}, nil
	}
	rec := e.do(t, http.MethodGet, "/v1/runs/r-1/logs?after=3&limit=20", viewerToken, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.JSONEq(t, `{"lines": [{"seq": 4, "at": "2026-03-04T05:06:11Z", "level": "INFO", "message": "page 1 written",
		"attrs": {"rows": 10}}], "next_after": 4, "done": false}`, rec.Body.String())
	require.EqualValues(t, 3, gotAfter)
	require.Equal(t, 20, gotLimit)

	rec = e.do(t, http.MethodGet, "/v1/runs/r-1/logs", viewerToken, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, 1000, gotLimit, "the default page")
}

func TestLogsRefusesBadParams(t *testing.T) {
	t.Parallel()
	for _, q := range []string{"after=-1", "after=x", "limit=0", "limit=10001", "follow=maybe", "tail=1"} {
		e := newEnv(t)
		rec := e.do(t, http.MethodGet, "/v1/runs/r-1/logs?"+q, viewerToken, nil)
		require.Equal(t, http.StatusBadRequest, rec.Code, q)
		require.Zero(t, e.runs.callCount(), q)
	}
	e := newEnv(t)
	rec := e.do(t, http.MethodGet, "/v1/runs/r-1/logs?follow=1", viewerToken, nil, "Last-Event-ID", "abc")
	require.Equal(t, http.StatusBadRequest, rec.Code)
}

// event is one parsed server-sent event.
type event struct{ name, id, data string }

func readEvents(t *testing.T, body string) []event {
	t.Helper()
	var out []event
	var cur event
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		l := sc.Text()
		switch {
		case l == "":
			if cur != (event{}) {
				out = append(out, cur)
			}
			cur = event{}
		case strings.HasPrefix(l, "event: "):
			cur.name = strings.TrimPrefix(l, "event: ")
		case strings.HasPrefix(l, "id: "):
			cur.id = strings.TrimPrefix(l, "id: ")
		case strings.HasPrefix(l, "data: "):
			cur.data = strings.TrimPrefix(l, "data: ")
		}
	}
	return out
}

// growingLog serves a run whose log grows one line per poll and ends after three.
type growingLog struct {
	mu     sync.Mutex
	polls  int
	afters []int64
}

func (g *growingLog) logs(_ runs.Principal, _ string, after int64, _ int) (runs.LogPage, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.polls++
	g.afters = append(g.afters, after)
	var lines []runs.LogLine
	for seq := after + 1; seq <= int64(g.polls) && seq <= 3; seq++ {
		lines = append(lines, line(seq, "line"))
	}
	next := after
	if len(lines) > 0 {
		next = lines[len(lines)-1].Seq
	}
	return runs.LogPage{Lines: lines, Next: next, Done: g.polls >= 4}, nil
}

func TestLogsFollowStreamsUntilTerminal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := &growingLog{}
	e.runs.logs = g.logs
	rec := e.do(t, http.MethodGet, "/v1/runs/r-1/logs?follow=1", viewerToken, nil)
	require.Equal(t, http.StatusOK, rec.Code)
	require.Equal(t, "text/event-stream", rec.Header().Get("Content-Type"))
	evs := readEvents(t, rec.Body.String())
	require.Len(t, evs, 4, rec.Body.String())
	for i, ev := range evs[:3] {
		require.Equal(t, "line", ev.name)
		require.Equal(t, []string{"1", "2", "3"}[i], ev.id)
		require.Contains(t, ev.data, `"message":"line"`)
	}
	require.Equal(t, event{name: "end", data: `{"run_id":"r-1","status":"completed"}`}, evs[3])
	require.Equal(t, []int64{0, 1, 2, 3}, g.afters, "each poll continues after the last line sent")
	e.runs.mu.Lock()
	require.Equal(t, []string{"follow", "logs"}, e.runs.calls[:2], "the follower is announced before the first read")
	e.runs.mu.Unlock()
}

// A follower the service refuses (a run of another tenant, a history that does not
// answer) gets the error as a plain answer: nothing is streamed.
func TestLogsFollowRefusedBeforeAnyRead(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runs.follow = func(runs.Principal, string) error { return errNotFound() }
	rec := e.do(t, http.MethodGet, "/v1/runs/r-x/logs?follow=1", viewerToken, nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	e.runs.mu.Lock()
	require.Equal(t, []string{"follow"}, e.runs.calls)
	e.runs.mu.Unlock()
	rec = e.do(t, http.MethodGet, "/v1/runs/r-x/logs", viewerToken, nil)
	require.Equal(t, http.StatusOK, rec.Code, "a page without follow announces nothing")
	e.runs.mu.Lock()
	require.Equal(t, []string{"follow", "logs"}, e.runs.calls)
	e.runs.mu.Unlock()
}

func TestLogsFollowResumesFromLastEventID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	g := &growingLog{polls: 3}
	e.runs.logs = g.logs
	rec := e.do(t, http.MethodGet, "/v1/runs/r-1/logs?follow=1", viewerToken, nil, "Last-Event-ID", "2")
	evs := readEvents(t, rec.Body.String())
	require.Equal(t, "3", evs[0].id)
	require.Equal(t, "end", evs[len(evs)-1].name)
	require.Equal(t, int64(2), g.afters[0])
}

func TestLogsFollowReportsAnErrorMidStream(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	n := 0
	e.runs.logs = func(_ runs.Principal, _ string, after int64, _ int) (runs.LogPage, error) {
		n++
		if n == 1 {
			return runs.LogPage{Lines: []runs.LogLine{line(1, "a")}, Next: 1}, nil
		}
		return runs.LogPage{}, errors.New("history gone: postgres://u:pw@db")
	}
	rec := e.do(t, http.MethodGet, "/v1/runs/r-1/logs?follow=true", viewerToken, nil)
	evs := readEvents(t, rec.Body.String())
	require.Len(t, evs, 2)
	require.Equal(t, "error", evs[1].name)
	require.Contains(t, evs[1].data, `"code":"internal"`)
	require.NotContains(t, rec.Body.String(), "pw@")
}

func TestLogsFollowOfAMissingRunIsA404(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.runs.logs = func(runs.Principal, string, int64, int) (runs.LogPage, error) { return runs.LogPage{}, errNotFound() }
	rec := e.do(t, http.MethodGet, "/v1/runs/r-x/logs?follow=1", viewerToken, nil)
	require.Equal(t, http.StatusNotFound, rec.Code)
	require.Equal(t, "application/json; charset=utf-8", rec.Header().Get("Content-Type"))
}

func TestLogsFollowStopsWhenTheClientLeaves(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	polled := make(chan struct{}, 100)
	e.runs.logs = func(_ runs.Principal, _ string, after int64, _ int) (runs.LogPage, error) {
		polled <- struct{}{}
		return runs.LogPage{Next: after}, nil // a run that never ends
	}
	ctx, cancel := context.WithCancel(context.Background())
	req := httptest.NewRequest(http.MethodGet, "/v1/runs/r-1/logs?follow=1", nil).WithContext(ctx)
	req.Header.Set("Authorization", "Bearer "+viewerToken)
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.h.ServeHTTP(httptest.NewRecorder(), req)
	}()
	<-polled
	<-polled
	cancel()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the stream did not end after the client left")
	}
}
