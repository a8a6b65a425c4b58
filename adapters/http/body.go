package http

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/naming"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
)

// readBody reads the whole (size-limited) body; a body over the limit fails with the
// *http.MaxBytesError that classify turns into 413.
func readBody(c *gin.Context) ([]byte, error) {
	if c.Request.Body == nil {
		return nil, nil
	}
	return io.ReadAll(c.Request.Body)
}

// decodeJSON decodes one JSON object into v, refusing unknown fields (naming them),
// trailing data and type mismatches (naming the field). An empty body is allowed only when
// optional is set; v is then left as it is.
func decodeJSON(c *gin.Context, v any, optional bool) error {
	body, err := readBody(c)
	if err != nil {
		return err
	}
	return decodeJSONBytes(body, v, optional)
}

func decodeJSONBytes(body []byte, v any, optional bool) error {
	if len(bytes.TrimSpace(body)) == 0 {
		if optional {
			return nil
		}
		return invalidBody("the request body is empty: send a JSON object")
	}
	// Before decoding, which allocates per level: a deep body is refused at its text.
	if err := pipeline.CheckShape(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return invalidBody("the request body holds more than one JSON value")
	}
	return checkBodyText(body)
}

// jsonError turns a decoding error into a message that names what to change.
func jsonError(err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return invalidBody("the request body is not valid JSON (at byte %d): %s", se.Offset, se.Error())
	case errors.As(err, &te):
		if te.Field == "" {
			return invalidBody("the request body must be a JSON object, not %s", te.Value)
		}
		return invalidBody("field %q must be %s, not %s", te.Field, jsonTypeName(te.Type.Kind().String()), te.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return invalidBody("the request body is truncated JSON")
	}
	if f, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return invalidBody("unknown field %s in the request body", f)
	}
	return err // a read error (body too large) keeps its own classification
}

func jsonTypeName(kind string) string {
	switch kind {
	case "int", "int64", "int32":
		return "an integer"
	case "string":
		return "a string"
	case "map", "struct":
		return "an object"
	case "slice":
		return "an array"
	case "bool":
		return "a boolean"
	}
	return kind
}

// configText accepts a config as YAML/JSON text (a JSON string) or as a JSON object, and
// returns the text the submit funnel parses. An object is passed through as JSON text.
func configText(raw json.RawMessage, field string) ([]byte, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || string(t) == "null" {
		return nil, invalidBody("field %q is required: the pipeline as YAML/JSON text or a JSON object", field)
	}
	switch t[0] {
	case '"':
		var s string
		if err := json.Unmarshal(t, &s); err != nil {
			return nil, invalidBody("field %q is not a valid JSON string", field)
		}
		if strings.TrimSpace(s) == "" {
			return nil, invalidBody("field %q is empty: send the pipeline as YAML/JSON text or a JSON object", field)
		}
		return []byte(s), nil
	case '{':
		return t, nil
	}
	return nil, invalidBody("field %q must be YAML/JSON text (a string) or a JSON object", field)
}

// yamlBody reports whether the request sends a raw YAML config as its body.
func yamlBody(c *gin.Context) bool {
	mt, _, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil {
		return false
	}
	switch mt {
	case "application/yaml", "application/x-yaml", "text/yaml", "text/x-yaml":
		return true
	}
	return false
}

// checkQuery refuses query parameters the route does not know, so a typo in a filter
// (`?staus=failed`) is an error instead of a silently unfiltered answer.
func checkQuery(q url.Values, known ...string) error {
	for k := range q {
		if !slices.Contains(known, k) {
			if len(known) == 0 {
				return invalidBody("unknown query parameter %s: this route takes none", naming.Quote(k))
			}
			return invalidBody("unknown query parameter %s (known: %s)", naming.Quote(k), strings.Join(known, ", "))
		}
	}
	return nil
}

// queryInt reads an integer parameter within [lo, hi], or def when absent.
func queryInt(q url.Values, name string, def, lo, hi int64) (int64, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, invalidBody("query parameter %q must be an integer from %d to %d, not %s", name, lo, hi, naming.Quote(v))
	}
	return n, nil
}

// queryTime reads an RFC 3339 time parameter; zero when absent.
func queryTime(q url.Values, name string) (time.Time, error) {
	v := q.Get(name)
	if v == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return time.Time{}, invalidBody("query parameter %q must be an RFC 3339 time like 2026-01-02T15:04:05Z, not %s", name, naming.Quote(v))
	}
	return t, nil
}

// queryBool reads a flag parameter: 1/true/yes or 0/false/no.
func queryBool(q url.Values, name string) (bool, error) {
	switch strings.ToLower(q.Get(name)) {
	case "":
		return false, nil
	case "1", "true", "yes":
		return true, nil
	case "0", "false", "no":
		return false, nil
	}
	return false, invalidBody("query parameter %q must be 1 or 0, not %q", name, q.Get(name))
}

// parseLabels reads k=v pairs; field names the parameter for messages.
// At most limit pairs are read: the count is refused before anything is built from them.
func parseLabels(pairs []string, field string, limit int) (map[string]string, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	if len(pairs) > limit {
		return nil, invalidBody("%s is given %d times: at most %d are allowed", field, len(pairs), limit)
	}
	out := make(map[string]string, len(pairs))
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, invalidBody("%s %s must be key=value", field, naming.Quote(p))
		}
		out[k] = v
	}
	return out, nil
}

// submitBody is the JSON body of POST /v1/runs (SPEC §2.3).
type submitBody struct {
	Config         json.RawMessage   `json:"config"`
	Name           string            `json:"name"`
	Labels         map[string]string `json:"labels"`
	Pool           string            `json:"pool"`
	IdempotencyKey string            `json:"idempotency_key"`
	RunKey         string            `json:"run_key"`
	TimeoutSecs    int               `json:"timeout_secs"`
	Retry          *runs.Retry       `json:"retry"`
	Callback       *callbackBody     `json:"callback"`
	Clock          string            `json:"clock"`
}

type callbackBody struct {
	URL         string         `json:"url"`
	On          []string       `json:"on"`
	ExtraFields map[string]any `json:"extra_fields"`
}

// submitQuery are the options a raw YAML submission takes from the query string.
func submitQuery() []string {
	return []string{"name", "pool", "label", "idempotency_key", "run_key", "timeout_secs", "clock"}
}

// submitRequest builds the funnel's request from either body shape.
func submitRequest(c *gin.Context) (runs.SubmitRequest, error) {
	var req runs.SubmitRequest
	q := c.Request.URL.Query()
	if yamlBody(c) {
		if err := checkQuery(q, submitQuery()...); err != nil {
			return req, err
		}
		text, err := readBody(c)
		if err != nil {
			return req, err
		}
		if len(bytes.TrimSpace(text)) == 0 {
			return req, invalidBody("the request body is empty: send the pipeline YAML")
		}
		timeout, err := queryInt(q, "timeout_secs", 0, 0, 1<<31-1)
		if err != nil {
			return req, err
		}
		labels, err := parseLabels(q["label"], "query parameter label", run.MaxLabels)
		if err != nil {
			return req, err
		}
		req = runs.SubmitRequest{Config: text, Name: q.Get("name"), Pool: q.Get("pool"), Labels: labels,
			IdempotencyKey: q.Get("idempotency_key"), RunKey: q.Get("run_key"), TimeoutSecs: int(timeout)}
		req.Clock, err = parseClock(q.Get("clock"), "query parameter clock")
		return req, err
	}
	if err := checkQuery(q); err != nil {
		return req, err
	}
	body, err := readBody(c)
	if err != nil {
		return req, err
	}
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] != '{' {
		return req, invalidBody("the request body must be a JSON object {\"config\": …}; " +
			"to send a raw YAML config set Content-Type: application/yaml")
	}
	var b submitBody
	if err := decodeJSONBytes(body, &b, false); err != nil {
		return req, err
	}
	text, err := configText(b.Config, "config")
	if err != nil {
		return req, err
	}
	if b.TimeoutSecs < 0 {
		return req, invalidBody("field \"timeout_secs\" must be zero (no timeout) or more, not %d", b.TimeoutSecs)
	}
	req = runs.SubmitRequest{Config: text, Name: b.Name, Labels: b.Labels, Pool: b.Pool,
		IdempotencyKey: b.IdempotencyKey, RunKey: b.RunKey, TimeoutSecs: b.TimeoutSecs, Retry: b.Retry}
	if b.Callback != nil {
		if strings.TrimSpace(b.Callback.URL) == "" {
			return req, invalidBody("field \"callback.url\" is required when callback is set")
		}
		req.Callback = &runs.Callback{URL: b.Callback.URL, On: b.Callback.On, ExtraFields: b.Callback.ExtraFields}
	}
	req.Clock, err = parseClock(b.Clock, "field \"clock\"")
	return req, err
}

func parseClock(v, field string) (*time.Time, error) {
	if v == "" {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		return nil, invalidBody("%s must be an RFC 3339 time like 2026-01-02T15:04:05Z, not %s", field, naming.Quote(v))
	}
	return &t, nil
}

// rollbackBody is the optional body of POST /v1/runs/{id}/rollback.
type rollbackBody struct {
	Config json.RawMessage `json:"config"`
}

func rollbackConfig(c *gin.Context) ([]byte, error) {
	if err := checkQuery(c.Request.URL.Query()); err != nil {
		return nil, err
	}
	var b rollbackBody
	if err := decodeJSON(c, &b, true); err != nil {
		return nil, err
	}
	if len(bytes.TrimSpace(b.Config)) == 0 || string(bytes.TrimSpace(b.Config)) == "null" {
		return nil, nil
	}
	return configText(b.Config, "config")
}
