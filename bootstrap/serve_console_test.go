package bootstrap_test

import (
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// noRedirect reads the first answer instead of following it.
var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func consoleAnswer(t *testing.T, url string) *http.Response {
	t.Helper()
	resp, err := noRedirect.Get(url)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	return resp
}

func TestServeMountsTheConsoleUnlessUIIsOff(t *testing.T) {
	t.Parallel()
	s := startServer(t, nil, "--history", "memory", "--auth-token", "console-token-1")
	resp := consoleAnswer(t, "http://"+s.addr+"/")
	require.Equal(t, http.StatusFound, resp.StatusCode)
	require.Equal(t, "/ui/", resp.Header.Get("Location"))
	resp = consoleAnswer(t, "http://"+s.addr+"/ui/signin")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Security-Policy"), "default-src 'self'")
	require.Regexp(t, `^[0-9a-f]{32}$`, resp.Header.Get("X-Request-Id"), "console requests get ids like the API's")
	code, _ := s.do(t, "GET", "/v1/runs", "console-token-1", "")
	require.Equal(t, http.StatusOK, code, "the API is still served beside it")
	require.Equal(t, 0, s.stop())

	off := startServer(t, nil, "--history", "memory", "--auth-token", "console-token-1", "--ui=false")
	for _, path := range []string{"/", "/ui/", "/ui/signin", "/ui/static/console.js"} {
		require.Equal(t, http.StatusNotFound, consoleAnswer(t, "http://"+off.addr+path).StatusCode, path)
	}
	require.Equal(t, 0, off.stop())
}
