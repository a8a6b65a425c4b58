package http_test

import (
	"context"
	"net"
	nethttp "net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	httpconn "github.com/sluicehq/sluice/adapters/connectors/http"
	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/state"
	"github.com/sluicehq/sluice/tests/contract/connector"
)

// fastRetry keeps the backoff short; a Retry-After still wins (it is the server's word).
var fastRetry = map[string]any{"attempts": int64(5), "initial_secs": 0.01, "max_secs": 30.0}

func TestEveryPaginationReadsEveryPageOnce(t *testing.T) {
	t.Parallel()
	for _, typ := range []string{"offset", "page", "cursor", "link_header"} {
		t.Run(typ, func(t *testing.T) {
			t.Parallel()
			a := newAPI(t, typ, 5, connector.Data(23))
			pages := conntest.Read(t, httpconn.New(), execute.ReadRequest{Config: a.config(nil), BatchSize: 10})
			require.Equal(t, conntest.Seq(1, 23), conntest.Ints(t, pages, "id"))
			want := map[int]int{1: 1, 2: 1, 3: 1, 4: 1, 5: 1}
			if typ == "offset" || typ == "page" {
				want[6] = 1 // 23 records in answers of 5: the sixth answer is empty and ends the read
			}
			if typ == "offset" {
				delete(want, 6) // a short answer (3 < limit) already says it is the last
			}
			require.Equal(t, want, a.servedCounts())
		})
	}
}

// The source survives two 429s (honouring their Retry-After) and a 503, reading every
// page once.
func TestRetriesRateLimitsAndServerErrors(t *testing.T) {
	t.Parallel()
	a := newAPI(t, "offset", 5, connector.Data(12))
	a.fail(nethttp.StatusTooManyRequests, nethttp.StatusTooManyRequests, nethttp.StatusServiceUnavailable)
	pages := conntest.Read(t, httpconn.New(), execute.ReadRequest{Config: a.config(map[string]any{"retry": fastRetry}), BatchSize: 100})
	require.Equal(t, conntest.Seq(1, 12), conntest.Ints(t, pages, "id"))
	require.Equal(t, map[int]int{1: 1, 2: 1, 3: 1}, a.servedCounts())
	at := a.arrivals()
	require.Len(t, at, 6, "three failures, then three answers")
	require.GreaterOrEqual(t, at[1].Sub(at[0]), time.Second, "the first 429's Retry-After: 1 is honoured")
	require.GreaterOrEqual(t, at[2].Sub(at[1]), time.Second, "the second 429's Retry-After: 1 is honoured")
}

func TestRetriesGiveUpKeepingTheTransientMark(t *testing.T) {
	t.Parallel()
	a := newAPI(t, "none", 5, connector.Data(3))
	a.fail(502, 502, 502)
	cfg := a.config(map[string]any{"retry": map[string]any{"attempts": int64(3), "initial_secs": 0.01, "max_secs": 0.02}})
	err := conntest.ReadErr(httpconn.New(), execute.ReadRequest{Config: cfg, BatchSize: 10})
	require.ErrorContains(t, err, "http: page 1: GET "+a.srv.URL+"/items answered 502 Bad Gateway")
	require.True(t, execute.IsTransient(err), "a run-level retry (on: transient) sees the mark")
	require.Len(t, a.arrivals(), 3)
}

func TestClientErrorsFailAtOnceWithoutSecrets(t *testing.T) {
	t.Parallel()
	a := newAPI(t, "none", 5, connector.Data(3))
	a.fail(nethttp.StatusUnauthorized)
	cfg := a.config(map[string]any{"retry": fastRetry, "headers": map[string]any{"Authorization": "Bearer s3cr3t-token"}})
	cfg["url"] = a.srv.URL + "/items?api_key=k3y-in-query"
	err := conntest.ReadErr(httpconn.New(), execute.ReadRequest{Config: cfg, BatchSize: 10})
	require.ErrorContains(t, err, "answered 401 Unauthorized")
	require.False(t, execute.IsTransient(err))
	require.NotContains(t, err.Error(), "s3cr3t")
	require.NotContains(t, err.Error(), "k3y")
	require.Len(t, a.arrivals(), 1, "a 401 is not retried")
	require.Equal(t, "Bearer s3cr3t-token", a.headers[0].Get("Authorization"), "headers are sent")
}

func TestRecordsPathErrors(t *testing.T) {
	t.Parallel()
	a := newAPI(t, "none", 5, connector.Data(3))
	for path, want := range map[string]string{
		"data.items.x": `http: page 1: records_path "data.items.x": "data.items" is a JSON array, not an object`,
		"data.nope":    `http: page 1: records_path "data.nope": the answer has no field "data.nope"`,
		"":             `http: page 1: records_path "" is a JSON object, not an array of records`,
	} {
		err := conntest.ReadErr(httpconn.New(), execute.ReadRequest{Config: a.config(map[string]any{"records_path": path}), BatchSize: 10})
		require.ErrorContains(t, err, want)
	}
}

func TestIncrementalReadsOnlyNewRecords(t *testing.T) {
	t.Parallel()
	a := newAPI(t, "cursor", 4, connector.Data(10))
	c := httpconn.New()
	read := func(after *state.Bookmark) []*execute.Page {
		return conntest.Read(t, c, execute.ReadRequest{Config: a.config(nil), BatchSize: 3,
			Incremental: &execute.Incremental{Cursor: "id", After: after}})
	}
	first := read(nil)
	require.Equal(t, conntest.Seq(1, 10), conntest.Ints(t, first, "id"))
	last := first[len(first)-1].Bookmark
	require.Equal(t, &state.Bookmark{Cursor: "id", Value: int64(10)}, last)

	all := connector.Data(14)
	a.add(connector.Dataset{Columns: all.Columns, Rows: all.Rows[10:]})
	require.Equal(t, conntest.Seq(11, 14), conntest.Ints(t, read(last), "id"))
}

func TestRateLimitSpacesRequests(t *testing.T) {
	t.Parallel()
	a := newAPI(t, "offset", 2, connector.Data(8))
	pages := conntest.Read(t, httpconn.New(), execute.ReadRequest{Config: a.config(map[string]any{"rate_limit_per_sec": 10.0}), BatchSize: 100})
	require.Equal(t, conntest.Seq(1, 8), conntest.Ints(t, pages, "id"))
	at := a.arrivals()
	require.Len(t, at, 5)
	// Request starts are 100 ms apart; arrivals can only bunch by the first one's transit
	// delay, so the span of five is at least four intervals less a margin for it.
	require.GreaterOrEqual(t, at[4].Sub(at[0]), 350*time.Millisecond, "10 requests per second at most")
}

func TestUnreachableHostIsTransient(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	cfg := map[string]any{"url": "http://" + addr + "/x", "retry": map[string]any{"attempts": int64(2), "initial_secs": 0.01, "max_secs": 0.02}}
	_, err = httpconn.New().OpenSource(context.Background(), execute.ReadRequest{Config: cfg, BatchSize: 10})
	require.ErrorContains(t, err, "http: page 1: GET http://"+addr+"/x")
	require.True(t, execute.IsTransient(err))
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	spec := httpconn.New().Spec()
	for key, cfg := range map[string]map[string]any{
		"url":                    {"url": "ftp://x"},
		"pagination.type":        {"url": "http://x", "pagination": map[string]any{"type": "scroll"}},
		"pagination.cursor_path": {"url": "http://x", "pagination": map[string]any{"type": "cursor"}},
		"pagination.limit":       {"url": "http://x", "pagination": map[string]any{"type": "offset", "limit": int64(0)}},
		"pagination.size":        {"url": "http://x", "pagination": map[string]any{"type": "cursor", "cursor_path": "n", "size": int64(1)}},
		"rate_limit_per_sec":     {"url": "http://x", "rate_limit_per_sec": -1.0},
		"retry":                  {"url": "http://x", "retry": map[string]any{"attempts": int64(0)}},
		"headers.X-Api-Key":      {"url": "http://x", "headers": map[string]any{"X-Api-Key": int64(5)}},
	} {
		errs := spec.Check(0, cfg, "pipeline.source.config")
		require.Len(t, errs, 1, key)
		require.Equal(t, "pipeline.source.config."+key, errs[0].Path)
	}
	_, err := httpconn.New().OpenSource(context.Background(), execute.ReadRequest{Config: map[string]any{"url": "http://x"},
		Incremental: &execute.Incremental{Cursor: "id"}})
	require.ErrorContains(t, err, `"cursor_param"`)
}

func TestSpecLeavesADeferredURLForTheRun(t *testing.T) {
	t.Parallel()
	spec := httpconn.New().Spec()
	// A url holding a directive is left out of the checked config (resolved later).
	require.Empty(t, spec.Check(0, map[string]any{"records_path": "data"}, "p"))
	require.Len(t, spec.Check(0, map[string]any{"pagination": map[string]any{"type": "nope"}}, "p"), 1)
}

func TestTargetsNameTheHost(t *testing.T) {
	t.Parallel()
	c := httpconn.New()
	require.Equal(t, []execute.Target{{Key: "url", Host: "api.example.com", Port: 443}},
		c.Targets(0, map[string]any{"url": "https://api.example.com/v1/x?k=1"}))
	require.Equal(t, []execute.Target{{Key: "url", Host: "169.254.169.254", Port: 8080}},
		c.Targets(0, map[string]any{"url": "http://169.254.169.254:8080/latest"}))
	require.Empty(t, c.Targets(0, map[string]any{"url": "${env:API}/x"}))
}
