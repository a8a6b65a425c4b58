package http_test

import (
	"encoding/json"
	"fmt"
	"math"
	nethttp "net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/tests/contract/connector"
)

// api is an httptest JSON API over a fixed list of records ordered by id. It answers
// ?since=N with the records whose id is greater, paginates the way pagination says, and
// can fail a scripted number of times first.
type api struct {
	t          testing.TB
	pagination string // offset | page | cursor | link_header | none
	limit      int    // records per answer
	srv        *httptest.Server

	mu       sync.Mutex
	records  []map[string]any
	failures []int       // statuses to answer before serving, in order
	served   map[int]int // answer number (1-based position in the list) → times served
	times    []time.Time // every request's arrival
	headers  []nethttp.Header
}

func newAPI(t testing.TB, pagination string, limit int, d connector.Dataset) *api {
	a := &api{t: t, pagination: pagination, limit: limit, served: map[int]int{}}
	a.add(d)
	a.srv = httptest.NewServer(nethttp.HandlerFunc(a.serve))
	t.Cleanup(a.srv.Close)
	return a
}

func (a *api) add(d connector.Dataset) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, r := range d.Rows {
		o := map[string]any{}
		for i, c := range d.Columns {
			o[c] = r[i]
		}
		a.records = append(a.records, o)
	}
}

func (a *api) fail(statuses ...int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.failures = append(a.failures, statuses...)
}

func (a *api) serve(w nethttp.ResponseWriter, r *nethttp.Request) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.times = append(a.times, time.Now())
	a.headers = append(a.headers, r.Header.Clone())
	if len(a.failures) > 0 {
		status := a.failures[0]
		a.failures = a.failures[1:]
		if status == nethttp.StatusTooManyRequests {
			w.Header().Set("Retry-After", "1")
		}
		w.WriteHeader(status)
		return
	}
	q := r.URL.Query()
	var recs []map[string]any
	since := int64(math.MinInt64)
	if s := q.Get("since"); s != "" {
		since, _ = strconv.ParseInt(s, 10, 64)
	}
	for _, o := range a.records {
		if id, _ := o["id"].(int64); id > since {
			recs = append(recs, o)
		}
	}
	from := 0
	switch a.pagination {
	case "offset":
		from, _ = strconv.Atoi(q.Get("offset"))
	case "page":
		p, _ := strconv.Atoi(q.Get("page"))
		from = (p - 1) * a.limit
	case "cursor", "link_header":
		from, _ = strconv.Atoi(q.Get("cursor"))
	}
	a.served[from/max(a.limit, 1)+1]++
	to := min(from+a.limit, len(recs))
	if a.pagination == "none" {
		to = len(recs)
	}
	from = min(from, to)
	body := map[string]any{"data": map[string]any{"items": recs[from:to]}}
	if to < len(recs) {
		switch a.pagination {
		case "cursor":
			body["next"] = strconv.Itoa(to)
		case "link_header":
			u := *r.URL
			qq := u.Query()
			qq.Set("cursor", strconv.Itoa(to))
			u.RawQuery = qq.Encode()
			w.Header().Add("Link", fmt.Sprintf(`<%s>; rel="next", <%s>; rel="first"`, u.String(), r.URL.Path))
		}
	}
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(body); err != nil {
		a.t.Error(err)
	}
}

func (a *api) config(extra map[string]any) map[string]any {
	c := map[string]any{"url": a.srv.URL + "/items", "records_path": "data.items", "cursor_param": "since"}
	switch a.pagination {
	case "offset":
		c["pagination"] = map[string]any{"type": "offset", "limit": int64(a.limit)}
	case "page":
		c["pagination"] = map[string]any{"type": "page"}
	case "cursor":
		c["pagination"] = map[string]any{"type": "cursor", "cursor_path": "next"}
	case "link_header":
		c["pagination"] = map[string]any{"type": "link_header"}
	}
	for k, v := range extra {
		c[k] = v
	}
	return c
}

func (a *api) servedCounts() map[int]int {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := map[int]int{}
	for k, v := range a.served {
		out[k] = v
	}
	return out
}

func (a *api) arrivals() []time.Time {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]time.Time(nil), a.times...)
}

// jsonValue is how a value comes back after encoding/json: times as RFC 3339 text,
// whole floats as integers.
func jsonValue(v any) any {
	if f, ok := v.(float64); ok && f == math.Trunc(f) {
		return int64(f)
	}
	return connector.JSONValue(v)
}
