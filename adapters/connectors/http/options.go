package http

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
)

// optionError names the config key a value of which is refused.
type optionError struct{ key, msg string }

func (e *optionError) Error() string { return fmt.Sprintf("config key %q: %s", e.key, e.msg) }

type pagination struct {
	typ        string
	param      string // the query parameter carrying the cursor, offset or page number
	cursorPath []string
	limitParam string
	limit      int64
	start      int64
	sizeParam  string
	size       int64
}

type options struct {
	url         *url.URL
	method      string
	headers     [][2]string // sorted by name, so requests are the same on every run
	body        string
	recordsPath []string
	page        pagination
	interval    time.Duration // between request starts; 0: unlimited
	cursorParam string
	timeout     time.Duration
	retry       retry.Policy
}

func optionsOf(c map[string]any) (options, error) {
	var o options
	raw, err := cfg.String(c, "url", "")
	if err != nil {
		return o, &optionError{"url", err.Error()}
	}
	if o.url, err = url.Parse(raw); err != nil || (o.url.Scheme != "http" && o.url.Scheme != "https") || o.url.Host == "" {
		return o, &optionError{"url", "must be an absolute http:// or https:// URL"}
	}
	if o.method, err = cfg.String(c, "method", "GET"); err != nil {
		return o, &optionError{"method", err.Error()}
	}
	o.method = strings.ToUpper(o.method)
	if o.method != "GET" && o.method != "POST" {
		return o, &optionError{"method", fmt.Sprintf("must be GET or POST, got %q", o.method)}
	}
	if h, ok := c["headers"]; ok && h != nil {
		m, ok := h.(map[string]any)
		if !ok {
			return o, &optionError{"headers", "must be a map of header names to values"}
		}
		for k, v := range m {
			s, ok := v.(string)
			if !ok {
				// The value is not quoted: it may be a credential.
				return o, &optionError{"headers." + k, "must be a string"}
			}
			o.headers = append(o.headers, [2]string{k, s})
		}
		sort.Slice(o.headers, func(i, j int) bool { return o.headers[i][0] < o.headers[j][0] })
	}
	if o.body, err = cfg.String(c, "body", ""); err != nil {
		return o, &optionError{"body", err.Error()}
	}
	rp, err := cfg.String(c, "records_path", "")
	if err != nil {
		return o, &optionError{"records_path", err.Error()}
	}
	o.recordsPath = splitPath(rp)
	if o.page, err = paginationOf(c["pagination"]); err != nil {
		return o, err
	}
	rate, _, err := cfg.Float(c, "rate_limit_per_sec")
	if err != nil || rate < 0 {
		return o, &optionError{"rate_limit_per_sec", "must be a number ≥ 0"}
	}
	if rate > 0 {
		o.interval = time.Duration(float64(time.Second) / rate)
	}
	if o.cursorParam, err = cfg.String(c, "cursor_param", ""); err != nil {
		return o, &optionError{"cursor_param", err.Error()}
	}
	secs, err := cfg.Int(c, "timeout_secs", 60)
	if err != nil || secs < 1 {
		return o, &optionError{"timeout_secs", "must be an integer ≥ 1"}
	}
	o.timeout = time.Duration(secs) * time.Second
	if o.retry, err = retry.Parse(c, retry.Default()); err != nil {
		return o, &optionError{"retry", err.Error()}
	}
	return o, nil
}

func splitPath(p string) []string {
	if p == "" {
		return nil
	}
	return strings.Split(p, ".")
}

func paginationOf(v any) (pagination, error) {
	p := pagination{typ: PageNone}
	if v == nil {
		return p, nil
	}
	m, ok := v.(map[string]any)
	if !ok {
		return p, &optionError{"pagination", "must be a map like {type: cursor, cursor_path: meta.next}"}
	}
	var err error
	if p.typ, err = cfg.String(m, "type", PageNone); err != nil {
		return p, &optionError{"pagination.type", err.Error()}
	}
	allowed := map[string][]string{
		PageNone:   {},
		PageCursor: {"cursor_path", "param"},
		PageOffset: {"param", "limit_param", "limit"},
		PageNumber: {"param", "start", "size_param", "size"},
		PageLink:   {},
	}
	keys, ok := allowed[p.typ]
	if !ok {
		return p, &optionError{"pagination.type", fmt.Sprintf("must be none, cursor, offset, page or link_header, got %q", p.typ)}
	}
	for k := range m {
		if k != "type" && !contains(keys, k) {
			return p, &optionError{"pagination." + k, fmt.Sprintf("is not a key of pagination type %s (allowed: %s)", p.typ, strings.Join(keys, ", "))}
		}
	}
	str := func(key, def string) (string, error) {
		s, err := cfg.String(m, key, def)
		if err != nil {
			return "", &optionError{"pagination." + key, err.Error()}
		}
		return s, nil
	}
	num := func(key string, def, least int64) (int64, error) {
		n, err := cfg.Int(m, key, def)
		if err != nil || n < least {
			return 0, &optionError{"pagination." + key, fmt.Sprintf("must be an integer ≥ %d", least)}
		}
		return n, nil
	}
	switch p.typ {
	case PageCursor:
		cp, err := str("cursor_path", "")
		if err != nil {
			return p, err
		}
		if cp == "" {
			return p, &optionError{"pagination.cursor_path", "must name the dot path of the next cursor in each answer"}
		}
		p.cursorPath = splitPath(cp)
		if p.param, err = str("param", "cursor"); err != nil {
			return p, err
		}
	case PageOffset:
		if p.param, err = str("param", "offset"); err != nil {
			return p, err
		}
		if p.limitParam, err = str("limit_param", "limit"); err != nil {
			return p, err
		}
		if p.limit, err = num("limit", 100, 1); err != nil {
			return p, err
		}
	case PageNumber:
		if p.param, err = str("param", "page"); err != nil {
			return p, err
		}
		if p.start, err = num("start", 1, 0); err != nil {
			return p, err
		}
		if p.sizeParam, err = str("size_param", ""); err != nil {
			return p, err
		}
		if p.size, err = num("size", 0, 0); err != nil {
			return p, err
		}
	}
	return p, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
