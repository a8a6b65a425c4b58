package secret

import (
	"context"
	"log/slog"
	"slices"
)

// NewHandler wraps inner so that every record's message and attributes pass through r
// first: string values, the text of errors, values nested in groups, and any other value
// whose printed form holds a secret (that value is then replaced by its masked text).
//
// Attributes and groups added with WithAttrs/WithGroup are kept here and redacted on
// every record rather than once, so a secret registered after a logger was built (the
// values of a run are registered when it is claimed) is still masked.
func NewHandler(inner slog.Handler, r *Redactor) slog.Handler {
	return &handler{inner: inner, r: r}
}

type handler struct {
	inner  slog.Handler
	r      *Redactor
	root   []slog.Attr // WithAttrs before any WithGroup
	groups []frame     // open groups, outermost first
}

type frame struct {
	name  string
	attrs []slog.Attr
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.inner.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	out := slog.NewRecord(rec.Time, rec.Level, h.r.Redact(rec.Message), rec.PC)
	tail := make([]slog.Attr, 0, rec.NumAttrs())
	rec.Attrs(func(a slog.Attr) bool {
		tail = append(tail, h.attr(a))
		return true
	})
	// Nest the record's attributes in the open groups, innermost first; this is what the
	// inner handler would have done had it been given the groups itself.
	for i := len(h.groups) - 1; i >= 0; i-- {
		g := h.groups[i]
		inner := make([]slog.Attr, 0, len(g.attrs)+len(tail))
		for _, a := range g.attrs {
			inner = append(inner, h.attr(a))
		}
		tail = []slog.Attr{{Key: g.name, Value: slog.GroupValue(append(inner, tail...)...)}}
	}
	for _, a := range h.root {
		out.AddAttrs(h.attr(a))
	}
	out.AddAttrs(tail...)
	return h.inner.Handle(ctx, out)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	if len(as) == 0 {
		return h
	}
	c := h.clone()
	if n := len(c.groups); n > 0 {
		c.groups[n-1].attrs = append(c.groups[n-1].attrs, as...)
	} else {
		c.root = append(c.root, as...)
	}
	return c
}

func (h *handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	c := h.clone()
	c.groups = append(c.groups, frame{name: name})
	return c
}

// clone copies what With* appends to, so loggers derived from one another never share
// (and race on) a backing array.
func (h *handler) clone() *handler {
	c := &handler{inner: h.inner, r: h.r, root: slices.Clip(slices.Clone(h.root))}
	c.groups = make([]frame, len(h.groups))
	for i, g := range h.groups {
		c.groups[i] = frame{name: g.name, attrs: slices.Clip(slices.Clone(g.attrs))}
	}
	return c
}

// attr returns a with every secret masked.
func (h *handler) attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.r.Redact(v.String()))
	case slog.KindGroup:
		in := v.Group()
		out := make([]slog.Attr, len(in))
		for i, g := range in {
			out[i] = h.attr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, h.r.Redact(x.Error()))
		case []byte:
			// Printed with %v a []byte is a list of numbers; its text is what may leak
			// (the JSON handler writes it as base64, a form the Redactor also knows).
			if s := string(x); h.r.Redact(s) != s {
				return slog.String(a.Key, h.r.Redact(s))
			}
			return slog.Attr{Key: a.Key, Value: v}
		}
	}
	// Anything else (a struct, a map, a []byte, a number that happens to be a secret) is
	// checked in its printed form and kept as it was when that holds no secret, so the
	// inner handler renders it natively.
	s := v.String()
	if red := h.r.Redact(s); red != s {
		return slog.String(a.Key, red)
	}
	return slog.Attr{Key: a.Key, Value: v}
}
