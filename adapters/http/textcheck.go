package http

import (
	"bytes"
	"encoding/json"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/sluicehq/sluice/domain/naming"
)

// checkText refuses a NUL byte or invalid UTF-8 in any path parameter, query parameter
// name or query value before a handler sees it (SPEC §14.3). Every one of them ends up
// in a statement or an answer: PostgreSQL refuses NUL in TEXT and JSON cannot carry
// invalid UTF-8, so without this check they surfaced as 500s deep in the store.
func (s *server) checkText(c *gin.Context) {
	for _, p := range c.Params {
		if problem := naming.TextProblem(p.Value); problem != "" {
			s.refuseUnread(c, textRefused("path parameter "+strconv.Quote(p.Key), p.Key, problem))
			return
		}
	}
	q := c.Request.URL.Query()
	for _, k := range slices.Sorted(maps.Keys(q)) {
		if problem := naming.TextProblem(k); problem != "" {
			s.refuseUnread(c, textRefused("a query parameter name", "query", problem))
			return
		}
		for _, v := range q[k] {
			if problem := naming.TextProblem(v); problem != "" {
				s.refuseUnread(c, textRefused("query parameter "+strconv.Quote(k), k, problem))
				return
			}
		}
	}
	c.Next()
}

// textRefused is the 400 for text that cannot be stored; field goes to details.field.
func textRefused(what, field, problem string) *apiError {
	ae := invalidBody("%s %s", what, problem)
	ae.details = map[string]any{"field": field}
	return ae
}

// nulEscape is how a NUL reaches a JSON body: raw control bytes are already a syntax
// error, and the decoder replaces invalid UTF-8, but "\u0000" decodes to a NUL.
var nulEscape = []byte(`\u0000`)

// checkBodyText refuses a decoded JSON body with a NUL in any string (key or value),
// naming the first such field by its path. Bodies without the escape skip the walk.
func checkBodyText(body []byte) error {
	if !bytes.Contains(body, nulEscape) {
		return nil
	}
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil // the typed decode already accepted it; nothing more to say here
	}
	if path, ok := nulPath(v, ""); ok {
		if path == "" {
			path = "body"
		}
		return textRefused("field "+strconv.Quote(path), path, "contains a NUL byte")
	}
	return nil
}

// nulPath finds the first string holding a NUL under v, as a dotted path.
func nulPath(v any, at string) (string, bool) {
	join := func(k string) string {
		if at == "" {
			return k
		}
		return at + "." + k
	}
	switch x := v.(type) {
	case string:
		return at, strings.IndexByte(x, 0) >= 0
	case map[string]any:
		for _, k := range slices.Sorted(maps.Keys(x)) {
			if naming.TextProblem(k) != "" {
				return join(k), true
			}
			if p, ok := nulPath(x[k], join(k)); ok {
				return p, true
			}
		}
	case []any:
		for i, it := range x {
			if p, ok := nulPath(it, at+"["+strconv.Itoa(i)+"]"); ok {
				return p, true
			}
		}
	}
	return "", false
}

// refuseUnread answers err to a request whose body was not read; see closeUnread.
func (s *server) refuseUnread(c *gin.Context, err error) {
	closeUnread(c)
	s.fail(c, err)
}

// closeUnread marks an answer given before the body was read: the connection closes after
// it, and the read deadline passes now so net/http does not drain up to 256 KiB of body
// first — a client trickling a body must not hold the answer (or the connection).
func closeUnread(c *gin.Context) {
	if c.Request.ContentLength == 0 || c.Request.Body == nil || c.Request.Body == http.NoBody {
		return
	}
	c.Header("Connection", "close")
	_ = http.NewResponseController(c.Writer).SetReadDeadline(time.Now())
}
