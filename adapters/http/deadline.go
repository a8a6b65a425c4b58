package http

import (
	"errors"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/gin-gonic/gin"
)

// deadlineBody bounds receiving body: the connection's read deadline is set d from now and
// lifted again once the body is fully read, so the handler that follows (a log stream
// lasting as long as its run) is not cut by it. A request without a body gets no
// deadline: its headers were bounded by the server's ReadHeaderTimeout.
func deadlineBody(c *gin.Context, body io.ReadCloser, d time.Duration) io.ReadCloser {
	if c.Request.ContentLength == 0 || c.Request.Body == nil || c.Request.Body == http.NoBody {
		return body
	}
	rc := http.NewResponseController(c.Writer)
	if rc.SetReadDeadline(time.Now().Add(d)) != nil {
		return body // not a net/http connection (a test recorder): nothing to bound
	}
	return &timedBody{ReadCloser: body, rc: rc, limit: d}
}

// timedBody lifts the read deadline at the end of the body and turns a read that hit
// the deadline into the 408 naming the flag.
type timedBody struct {
	io.ReadCloser
	rc    *http.ResponseController
	limit time.Duration
	done  bool
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	switch {
	case errors.Is(err, io.EOF) && !b.done:
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	case err != nil && isTimeout(err):
		return n, &apiError{status: http.StatusRequestTimeout, code: codeRequestTimeout,
			message: "the request body did not arrive within " + b.limit.String() + " (the server's --read-timeout-secs)"}
	}
	return n, err
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
