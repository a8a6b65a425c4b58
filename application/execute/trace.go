package execute

import "context"

// Tracer is the tracing port (SPEC §14.6): the executor, the submit path, the cluster
// member and the HTTP adapter open spans through it and never see a tracing library. The
// telemetry adapter implements it with OpenTelemetry; NopTracer is the default, so
// tracing costs nothing unless an endpoint is configured. Implementations are safe for
// concurrent use.
type Tracer interface {
	// Start opens a span named name as a child of the span ctx carries (or of the remote
	// parent WithTraceparent put there, or as a new trace) and returns ctx carrying it.
	Start(ctx context.Context, name string, attrs ...Attr) (context.Context, Span)
	// Traceparent is the W3C traceparent of the span ctx carries ("" when none): what is
	// stored with a run so its execution, on whichever member, joins the trace.
	Traceparent(ctx context.Context) string
	// WithTraceparent returns ctx with tp (a W3C traceparent header value) as the remote
	// parent of the next span started from it; an empty or malformed tp leaves ctx as it is.
	WithTraceparent(ctx context.Context, tp string) context.Context
}

// Span is one open span. Its methods may be called from one goroutine at a time.
type Span interface {
	// Event records a point in time inside the span (a page, a decision).
	Event(name string, attrs ...Attr)
	// SetAttrs adds or replaces attributes.
	SetAttrs(attrs ...Attr)
	// Fail marks the span as failed with err's message (already redacted by the caller).
	Fail(msg string)
	// End closes the span; later calls do nothing.
	End()
}

// Attr is one span attribute or event attribute. Value is a string, bool, int or int64;
// other types are recorded as their fmt.Sprint text.
type Attr struct {
	Key   string
	Value any
}

// A builds an Attr.
func A(key string, value any) Attr { return Attr{Key: key, Value: value} }

// NopTracer records nothing. It still carries a traceparent through a context, so a
// member that does not trace stores the traceparent its client sent with a run, and the
// member that executes the run joins that trace if it traces.
type NopTracer struct{}

type traceparentKey struct{}

// Start answers ctx unchanged and a span that does nothing.
func (NopTracer) Start(ctx context.Context, _ string, _ ...Attr) (context.Context, Span) {
	return ctx, nopSpan{}
}

// Traceparent is the traceparent WithTraceparent put into ctx, or "".
func (NopTracer) Traceparent(ctx context.Context) string {
	tp, _ := ctx.Value(traceparentKey{}).(string)
	return tp
}

// WithTraceparent keeps tp in ctx when it is well formed.
func (NopTracer) WithTraceparent(ctx context.Context, tp string) context.Context {
	if !ValidTraceparent(tp) {
		return ctx
	}
	return context.WithValue(ctx, traceparentKey{}, tp)
}

type nopSpan struct{}

func (nopSpan) Event(string, ...Attr) {}
func (nopSpan) SetAttrs(...Attr)      {}
func (nopSpan) Fail(string)           {}
func (nopSpan) End()                  {}

// ValidTraceparent reports whether tp has the W3C traceparent shape of version 00:
// "00-" 32 hex "-" 16 hex "-" 2 hex, lower case, with non-zero ids. A stored value is
// bounded by it, so a client cannot store arbitrary text with a run.
func ValidTraceparent(tp string) bool {
	if len(tp) != 55 || tp[:3] != "00-" || tp[35] != '-' || tp[52] != '-' {
		return false
	}
	trace, span, flags := tp[3:35], tp[36:52], tp[53:]
	return lowerHex(trace) && lowerHex(span) && lowerHex(flags) && !allZero(trace) && !allZero(span)
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

func allZero(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] != '0' {
			return false
		}
	}
	return true
}
