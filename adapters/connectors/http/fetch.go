package http

import (
	"context"
	"errors"
	"fmt"
	"io"
	nethttp "net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cursor"
	"github.com/sluicehq/sluice/adapters/connectors/internal/records"
	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
)

// fetch sends the next request (retrying transient failures), queues the answer's
// records and moves the pagination on.
func (s *source) fetch(ctx context.Context) error {
	u := s.requestURL()
	s.requests++
	page := s.requests
	if s.check != nil {
		if err := s.check(ctx, u); err != nil {
			return fmt.Errorf("http: page %d: %s refused: %w", page, display(u), err)
		}
	}
	var body []byte
	var header nethttp.Header
	err := retry.Do(ctx, s.o.retry, func(ctx context.Context) error {
		var err error
		body, header, err = s.send(ctx, u, page)
		return err
	})
	if err != nil {
		return err
	}
	doc, recs, err := s.records(body, page)
	if err != nil {
		return err
	}
	s.log.Debug("http page fetched", "page", page, "url", display(u), "records", len(recs))
	s.queue = recs
	s.advance(recs, doc, header, u)
	return nil
}

// requestURL is the URL of the next request: the configured one with the pagination's
// and the bookmark's parameters, or the Link header's next URL.
func (s *source) requestURL() *url.URL {
	if s.next != nil {
		return s.next
	}
	u := *s.o.url
	q := u.Query()
	if s.o.cursorParam != "" && s.after != nil {
		q.Set(s.o.cursorParam, cursor.Text(s.after))
	}
	p := s.o.page
	switch p.typ {
	case PageCursor:
		if s.cursor != "" {
			q.Set(p.param, s.cursor)
		}
	case PageOffset:
		q.Set(p.param, strconv.FormatInt(s.offset, 10))
		q.Set(p.limitParam, strconv.FormatInt(p.limit, 10))
	case PageNumber:
		q.Set(p.param, strconv.FormatInt(s.pageNo, 10))
		if p.sizeParam != "" && p.size > 0 {
			q.Set(p.sizeParam, strconv.FormatInt(p.size, 10))
		}
	}
	u.RawQuery = q.Encode()
	return &u
}

// send makes one attempt: it waits for the rate limit, sends the request and reads the
// answer. 429, 5xx and network failures are transient (with the server's Retry-After).
func (s *source) send(ctx context.Context, u *url.URL, page int) ([]byte, nethttp.Header, error) {
	if err := s.pace(ctx); err != nil {
		return nil, nil, err
	}
	rctx, cancel := context.WithTimeout(ctx, s.o.timeout)
	defer cancel()
	var body io.Reader
	if s.o.body != "" {
		body = strings.NewReader(s.o.body)
	}
	req, err := nethttp.NewRequestWithContext(rctx, s.o.method, u.String(), body)
	if err != nil {
		return nil, nil, fmt.Errorf("http: page %d: %s: %w", page, display(u), err)
	}
	req.Header.Set("Accept", "application/json")
	if s.o.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, h := range s.o.headers {
		req.Header.Set(h[0], h[1])
	}
	what := fmt.Sprintf("http: page %d: %s %s", page, s.o.method, display(u))
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, nil, s.transportErr(ctx, what, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
		// The answer's body is not quoted: it may echo the request's credentials.
		err := fmt.Errorf("%s answered %s", what, resp.Status)
		if resp.StatusCode < 500 && resp.StatusCode != nethttp.StatusTooManyRequests {
			err = fmt.Errorf("%w; check url, method, headers and body", err)
		}
		return nil, nil, retry.Status(err, resp.StatusCode, resp.Header)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody+1))
	if err != nil {
		return nil, nil, s.transportErr(ctx, what+": read answer", err)
	}
	if len(b) > maxBody {
		return nil, nil, fmt.Errorf("%s: the answer exceeds %d MiB; ask for smaller pages (pagination)", what, maxBody>>20)
	}
	return b, resp.Header, nil
}

// transportErr words a failed exchange without the URL's query; one that a retry could
// fix is transient, a confinement refusal or a cancellation is not.
func (s *source) transportErr(ctx context.Context, what string, err error) error {
	// url.Error repeats the URL with its query; unwrap to the cause.
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return retry.Network(ctx, fmt.Errorf("%s: %w", what, err))
}

// pace waits until the rate limit allows the next request.
func (s *source) pace(ctx context.Context) error {
	if s.o.interval > 0 && !s.last.IsZero() {
		if wait := time.Until(s.last.Add(s.o.interval)); wait > 0 {
			t := time.NewTimer(wait)
			defer t.Stop()
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-t.C:
			}
		}
	}
	s.last = time.Now()
	return nil
}

// records finds the array at records_path; every item must be an object.
func (s *source) records(body []byte, page int) (any, []records.Object, error) {
	doc, err := records.Decode(body)
	if err != nil {
		return nil, nil, fmt.Errorf("http: page %d: the answer is not JSON: %w", page, err)
	}
	v, err := at(doc, s.o.recordsPath)
	if err != nil {
		return nil, nil, fmt.Errorf("http: page %d: records_path %q: %w", page, strings.Join(s.o.recordsPath, "."), err)
	}
	if v == nil {
		return doc, nil, nil // null: an API's way of saying "no records" too
	}
	arr, ok := v.([]any)
	if !ok {
		return nil, nil, fmt.Errorf("http: page %d: records_path %q is a JSON %s, not an array of records; set records_path to the array's dot path",
			page, strings.Join(s.o.recordsPath, "."), records.Kind(v))
	}
	out := make([]records.Object, len(arr))
	for i, e := range arr {
		o, ok := e.(records.Object)
		if !ok {
			return nil, nil, fmt.Errorf("http: page %d: record %d at records_path %q is a JSON %s, not an object",
				page, i+1, strings.Join(s.o.recordsPath, "."), records.Kind(e))
		}
		out[i] = o
	}
	return doc, out, nil
}

// at walks a dot path through objects.
func at(v any, path []string) (any, error) {
	for i, k := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%q is a JSON %s, not an object", strings.Join(path[:i], "."), records.Kind(v))
		}
		if v, ok = m[k]; !ok {
			return nil, fmt.Errorf("the answer has no field %q", strings.Join(path[:i+1], "."))
		}
	}
	return v, nil
}

// advance moves the pagination past an answer of recs; an empty answer ends the read.
func (s *source) advance(recs []records.Object, doc any, header nethttp.Header, u *url.URL) {
	p := s.o.page
	if len(recs) == 0 {
		s.done = true
		return
	}
	switch p.typ {
	case PageNone:
		s.done = true
	case PageCursor:
		next, err := at(doc, p.cursorPath)
		if err != nil || next == nil || cursor.Text(next) == "" {
			s.done = true
			return
		}
		s.cursor = cursor.Text(next)
	case PageOffset:
		s.offset += int64(len(recs))
		if int64(len(recs)) < p.limit {
			s.done = true
		}
	case PageNumber:
		s.pageNo++
		if p.size > 0 && int64(len(recs)) < p.size {
			s.done = true
		}
	case PageLink:
		next := nextLink(header.Values("Link"))
		if next == "" {
			s.done = true
			return
		}
		ref, err := url.Parse(next)
		if err != nil {
			s.done = true
			return
		}
		s.next = u.ResolveReference(ref)
	}
}

// nextLink returns the target of rel="next" in Link headers (RFC 8288).
func nextLink(values []string) string {
	for _, v := range values {
		for _, part := range strings.Split(v, ",") {
			segs := strings.Split(part, ";")
			target := strings.TrimSpace(segs[0])
			if !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
				continue
			}
			for _, param := range segs[1:] {
				k, val, ok := strings.Cut(strings.TrimSpace(param), "=")
				if !ok || !strings.EqualFold(k, "rel") {
					continue
				}
				for _, rel := range strings.Fields(strings.Trim(val, `"`)) {
					if strings.EqualFold(rel, "next") {
						return target[1 : len(target)-1]
					}
				}
			}
		}
	}
	return ""
}
