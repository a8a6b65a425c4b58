package client

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// maxEventBytes bounds one server-sent event line; a persisted log line is far smaller.
const maxEventBytes = 4 << 20

// ErrStreamEnded is returned when a followed stream closes before the run ended.
var ErrStreamEnded = errors.New("the log stream closed before the run ended")

// FollowLogs streams a run's log lines with seq > after to fn as they are written
// (GET /v1/runs/{id}/logs?follow=1, server-sent events) and returns the run's final
// status once it is terminal. An error from fn stops the stream and is returned.
func (c *Client) FollowLogs(ctx context.Context, id string, after int64, fn func(LogLine) error) (string, error) {
	q := url.Values{"follow": {"1"}}
	if after > 0 {
		q.Set("after", strconv.FormatInt(after, 10))
	}
	resp, err := c.send(ctx, http.MethodGet, "/v1/runs/"+url.PathEscape(id)+"/logs", q, nil, "text/event-stream")
	if err != nil {
		return "", err
	}
	defer func() { _ = resp.Body.Close() }()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 0, 64<<10), maxEventBytes)
	var event string
	var data strings.Builder
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if event == "" && data.Len() == 0 {
				continue
			}
			status, done, err := dispatch(event, data.String(), fn)
			if err != nil || done {
				return status, err
			}
			event = ""
			data.Reset()
		case strings.HasPrefix(line, ":"):
			// a keep-alive comment
		case strings.HasPrefix(line, "event:"):
			event = strings.TrimSpace(strings.TrimPrefix(line, "event:"))
		case strings.HasPrefix(line, "data:"):
			if data.Len() > 0 {
				data.WriteByte('\n')
			}
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		}
	}
	if err := sc.Err(); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		return "", fmt.Errorf("following logs of run %s: %w", id, err)
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	return "", ErrStreamEnded
}

// dispatch handles one complete event; done is true for the stream's last event.
func dispatch(event, data string, fn func(LogLine) error) (status string, done bool, err error) {
	switch event {
	case "line":
		var l LogLine
		if err := json.Unmarshal([]byte(data), &l); err != nil {
			return "", true, fmt.Errorf("a log event is not the expected JSON: %w", err)
		}
		return "", false, fn(l)
	case "end":
		var end StreamEnd
		if err := json.Unmarshal([]byte(data), &end); err != nil {
			return "", true, fmt.Errorf("the end event is not the expected JSON: %w", err)
		}
		return end.Status, true, nil
	case "error":
		var eb ErrorBody
		if err := json.Unmarshal([]byte(data), &eb); err != nil {
			return "", true, fmt.Errorf("the server failed while streaming logs: %s", data)
		}
		return "", true, &Error{Status: http.StatusOK, Code: eb.Error.Code, Message: eb.Error.Message}
	}
	return "", false, nil // unknown events are for newer clients
}
