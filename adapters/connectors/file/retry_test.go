package file_test

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/file"
	"github.com/sluicehq/sluice/application/execute"
)

// A file served over http that first answers 503 and 429 is fetched again (the retry
// block); a 404 is not.
func TestHTTPRetriesTransientStatuses(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch calls.Add(1) {
		case 1:
			w.WriteHeader(http.StatusServiceUnavailable)
		case 2:
			w.WriteHeader(http.StatusTooManyRequests)
		default:
			_, _ = w.Write([]byte("id,name\n1,a\n2,b\n"))
		}
	}))
	t.Cleanup(srv.Close)
	fast := map[string]any{"attempts": int64(3), "initial_secs": 0.01, "max_secs": 0.05}
	pages, err := readPages(t, file.New(), execute.ReadRequest{Config: map[string]any{"path": srv.URL + "/data.csv", "retry": fast}})
	require.NoError(t, err)
	require.Len(t, pages, 1)
	require.Len(t, pages[0].Rows, 2)
	require.EqualValues(t, 3, calls.Load())

	missing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		http.NotFound(w, r)
	}))
	t.Cleanup(missing.Close)
	calls.Store(0)
	_, err = readPages(t, file.New(), execute.ReadRequest{Config: map[string]any{"path": missing.URL + "/data.csv", "retry": fast}})
	require.ErrorContains(t, err, "HTTP status 404")
	require.False(t, execute.IsTransient(err))
	require.EqualValues(t, 1, calls.Load(), "a 404 is not retried")
}
