package http

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
)

// decodeBounded decodes body into v as a request handler does and fails the fuzz run on
// a panic-free but untyped error or on allocation out of proportion to the body.
func decodeBounded(t *testing.T, body []byte, v any) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := decodeJSONBytes(body, v, false)
	runtime.ReadMemStats(&after)
	var ae *apiError
	var fields pipeline.Errors
	if err != nil && !errors.As(err, &ae) && !errors.As(err, &fields) {
		t.Fatalf("untyped error %T: %v", err, err)
	}
	if err != nil && ae != nil && ae.status >= 500 {
		t.Fatalf("a body answered %d: %v", ae.status, err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > uint64(200*len(body))+4<<20 {
		t.Fatalf("decoding %d bytes allocated %d bytes", len(body), grew)
	}
}

// FuzzSubmitBody: a POST /v1/runs body decodes or is refused with a 4xx naming what to
// change — NUL escapes, deep nesting and unknown fields included — and never panics.
func FuzzSubmitBody(f *testing.F) {
	f.Add([]byte(`{"config": "version: 1", "name": "x", "labels": {"k": "v"}, "callback": {"url": "http://h/"}}`))
	f.Add([]byte(`{"config": {"pipeline": {"a": 1}}, "run_key": "a\u0000b"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var b submitBody
		decodeBounded(t, body, &b)
		if _, err := configText(b.Config, "config"); err != nil {
			var ae *apiError
			if !errors.As(err, &ae) {
				t.Fatalf("untyped config error %T: %v", err, err)
			}
		}
	})
}

// FuzzTemplateRunBody: the same for POST /v1/templates/{id}/runs.
func FuzzTemplateRunBody(f *testing.F) {
	f.Add([]byte(`{"params": {"day": "2026-01-02", "n": 3}, "labels": {"k": "v"}, "pool": "default"}`))
	f.Add([]byte(`{"params": {"token": "ab"}}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var b templateRunBody
		decodeBounded(t, body, &b)
	})
}

// FuzzLabelFilters: a list's label filters (the raw query value, split as repeated
// `label` parameters) parse and pass the domain's check, or are refused with a 400 —
// more than 20 of them before anything is built.
func FuzzLabelFilters(f *testing.F) {
	f.Add("k0=v&k1=v")
	f.Add(strings.Repeat("k=v&", 999) + "k=v")
	f.Add("k=a\x00b")
	f.Add("=v&k")
	f.Fuzz(func(t *testing.T, raw string) {
		labels, err := parseLabels(strings.Split(raw, "&"), "query parameter label", run.MaxLabelFilters)
		if err != nil {
			var ae *apiError
			if !errors.As(err, &ae) || ae.status != 400 {
				t.Fatalf("refusal is not a 400: %v", err)
			}
			return
		}
		if len(labels) > run.MaxLabelFilters {
			t.Fatalf("%d filters passed the cap", len(labels))
		}
		_ = run.CheckLabels(labels, run.MaxLabelFilters) // either answer is fine; it must not panic
	})
}
