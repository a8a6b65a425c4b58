package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	collector "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	common "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is one received span, ids in lower-case hex.
type Span struct {
	TraceID, SpanID, ParentID string
	Name                      string
	Attrs                     map[string]string
	Events                    []Event
	// Resource are the attributes of the process that exported it (service.instance.id).
	Resource map[string]string
	Failed   bool // status code ERROR
	Message  string
}

// Event is one span event.
type Event struct {
	Name  string
	Attrs map[string]string
}

// Receiver is an httptest server that takes OTLP/HTTP protobuf exports at Path.
type Receiver struct {
	*httptest.Server

	mu     sync.Mutex
	status int // answered instead of 200 when set (see Fail)
	spans  []Span
	paths  []string
}

// NewReceiver starts a receiver; Close it when done.
func NewReceiver() *Receiver {
	r := &Receiver{}
	r.Server = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

// Fail makes the receiver answer status to the next exports (0: accept again).
func (r *Receiver) Fail(status int) {
	r.mu.Lock()
	r.status = status
	r.mu.Unlock()
}

// Spans are every span received so far.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}

// Paths are the request paths of every export received so far.
func (r *Receiver) Paths() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.paths...)
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body := io.Reader(req.Body)
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	raw, err := io.ReadAll(io.LimitReader(body, 64<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg collector.ExportTraceServiceRequest
	if err := proto.Unmarshal(raw, &msg); err != nil {
		http.Error(w, fmt.Sprintf("not an OTLP protobuf export: %v", err), http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.paths = append(r.paths, req.URL.Path)
	if r.status != 0 {
		http.Error(w, "refused by the test", r.status)
		return
	}
	for _, rs := range msg.GetResourceSpans() {
		res := attrs(rs.GetResource().GetAttributes())
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, convert(s, res))
			}
		}
	}
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&collector.ExportTraceServiceResponse{})
	_, _ = w.Write(out)
}

func convert(s *tracepb.Span, res map[string]string) Span {
	sp := Span{
		TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
		ParentID: hex.EncodeToString(s.GetParentSpanId()), Name: s.GetName(), Attrs: attrs(s.GetAttributes()),
		Resource: res, Failed: s.GetStatus().GetCode() == tracepb.Status_STATUS_CODE_ERROR,
		Message: s.GetStatus().GetMessage(),
	}
	for _, e := range s.GetEvents() {
		sp.Events = append(sp.Events, Event{Name: e.GetName(), Attrs: attrs(e.GetAttributes())})
	}
	return sp
}

// attrs renders attribute values as text (ints in decimal, bools as true/false).
func attrs(kvs []*common.KeyValue) map[string]string {
	out := make(map[string]string, len(kvs))
	for _, kv := range kvs {
		v := kv.GetValue()
		switch x := v.GetValue().(type) {
		case *common.AnyValue_StringValue:
			out[kv.GetKey()] = x.StringValue
		case *common.AnyValue_IntValue:
			out[kv.GetKey()] = fmt.Sprint(x.IntValue)
		case *common.AnyValue_BoolValue:
			out[kv.GetKey()] = fmt.Sprint(x.BoolValue)
		case *common.AnyValue_DoubleValue:
			out[kv.GetKey()] = fmt.Sprint(x.DoubleValue)
		default:
			out[kv.GetKey()] = v.String()
		}
	}
	return out
}
