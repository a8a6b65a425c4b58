package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/sluicehq/sluice/domain/secret"
)

// Persisted run logs are flushed in batches: a statement per line would load the history
// with log traffic, and a reader following a run sees lines within a fraction of a second.
const (
	logFlushEvery = 500 * time.Millisecond
	logFlushLines = 100
	// logKeepLines bounds what one run buffers: the store keeps 10,000 lines and adds a
	// truncation marker when offered more, so one line past the cap is enough.
	logKeepLines = 10001
)

// runLogger returns the logger of one run: its lines go to the member's log and, from INFO
// up, to the run's persisted log, both redacted and carrying run_id and instance_id.
func (m *Member) runLogger(e *execution) (*slog.Logger, *runLog) {
	rl := &runLog{
		m:        m,
		runID:    e.claim.ID,
		kick:     make(chan struct{}, 1),
		done:     make(chan struct{}),
		finished: make(chan struct{}),
	}
	go rl.loop()
	tee := teeHandler{a: m.deps.Log.Handler(), b: &bufHandler{rl: rl}}
	log := slog.New(secret.NewHandler(tee, m.deps.Redactor)).
		With("run_id", e.claim.ID, "instance_id", m.cfg.InstanceID)
	if e.shard != nil {
		log = log.With("shard", e.shard.Ref.Index) // a shard's lines go to its run's log
	}
	return log, rl
}

// runLog buffers the persisted lines of one run and flushes them.
type runLog struct {
	m     *Member
	runID string

	mu     sync.Mutex
	lines  []LogLine
	kept   int
	closed bool

	kick     chan struct{}
	done     chan struct{}
	finished chan struct{}
	once     sync.Once
}

func (rl *runLog) add(l LogLine) {
	rl.mu.Lock()
	if rl.closed || rl.kept >= logKeepLines {
		rl.mu.Unlock()
		return
	}
	rl.kept++
	rl.lines = append(rl.lines, l)
	full := len(rl.lines) >= logFlushLines
	rl.mu.Unlock()
	if full {
		select {
		case rl.kick <- struct{}{}:
		default:
		}
	}
}

func (rl *runLog) loop() {
	defer close(rl.finished)
	t := time.NewTicker(logFlushEvery)
	defer t.Stop()
	for {
		select {
		case <-rl.done:
			rl.flush()
			return
		case <-t.C:
		case <-rl.kick:
		}
		rl.flush()
	}
}

func (rl *runLog) flush() {
	rl.mu.Lock()
	lines := rl.lines
	rl.lines = nil
	rl.mu.Unlock()
	if len(lines) == 0 {
		return
	}
	ctx, cancel := rl.m.stmt(rl.m.root)
	defer cancel()
	if err := rl.m.deps.Store.AppendLogs(ctx, rl.runID, lines); err != nil {
		// Logged to the member's log only: the run's own log is what failed.
		rl.m.log.Warn("persisting run log lines failed; they are dropped", "run_id", rl.runID,
			"lines", len(lines), "error", rl.m.redact(err.Error()))
		return
	}
	rl.m.runChanged(rl.runID)
}

// closeTaking stops the flusher WITHOUT flushing and returns what is still buffered, for
// Finish to write in the run's terminal transaction; later lines are not persisted.
func (rl *runLog) closeTaking() []LogLine {
	var rest []LogLine
	rl.once.Do(func() {
		rl.mu.Lock()
		rl.closed = true
		rest, rl.lines = rl.lines, nil
		rl.mu.Unlock()
		close(rl.done)
		<-rl.finished // a flush already under way ends first, so lines stay in order
	})
	return rest
}

// close flushes what is buffered and stops the flusher; later lines are not persisted.
func (rl *runLog) close() {
	rl.once.Do(func() {
		close(rl.done)
		<-rl.finished
		rl.mu.Lock()
		rl.closed = true
		rl.mu.Unlock()
	})
}

// teeHandler hands each record to two handlers.
type teeHandler struct{ a, b slog.Handler }

func (t teeHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return t.a.Enabled(ctx, l) || t.b.Enabled(ctx, l)
}

func (t teeHandler) Handle(ctx context.Context, r slog.Record) error {
	var errs []error
	if t.a.Enabled(ctx, r.Level) {
		errs = append(errs, t.a.Handle(ctx, r.Clone()))
	}
	if t.b.Enabled(ctx, r.Level) {
		errs = append(errs, t.b.Handle(ctx, r))
	}
	return errors.Join(errs...)
}

func (t teeHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return teeHandler{a: t.a.WithAttrs(as), b: t.b.WithAttrs(as)}
}

func (t teeHandler) WithGroup(name string) slog.Handler {
	return teeHandler{a: t.a.WithGroup(name), b: t.b.WithGroup(name)}
}

// bufHandler turns INFO+ records into LogLines for the run's persisted log. Groups
// flatten into dotted keys. Strings are redacted again here, because values the redacting
// handler may pass through untouched (errors, Stringers) only become text at this point.
type bufHandler struct {
	rl     *runLog
	attrs  map[string]any
	prefix string
}

func (h *bufHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelInfo }

func (h *bufHandler) Handle(_ context.Context, r slog.Record) error {
	attrs := make(map[string]any, len(h.attrs)+r.NumAttrs())
	for k, v := range h.attrs {
		attrs[k] = v
	}
	r.Attrs(func(a slog.Attr) bool {
		h.put(attrs, h.prefix, a)
		return true
	})
	h.rl.add(LogLine{At: r.Time, Level: r.Level.String(), Message: h.rl.m.redact(r.Message), Attrs: attrs})
	return nil
}

func (h *bufHandler) WithAttrs(as []slog.Attr) slog.Handler {
	c := &bufHandler{rl: h.rl, prefix: h.prefix, attrs: make(map[string]any, len(h.attrs)+len(as))}
	for k, v := range h.attrs {
		c.attrs[k] = v
	}
	for _, a := range as {
		h.put(c.attrs, h.prefix, a)
	}
	return c
}

func (h *bufHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &bufHandler{rl: h.rl, attrs: h.attrs, prefix: h.prefix + name + "."}
}

func (h *bufHandler) put(dst map[string]any, prefix string, a slog.Attr) {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		p := prefix
		if a.Key != "" {
			p += a.Key + "."
		}
		for _, g := range v.Group() {
			h.put(dst, p, g)
		}
		return
	}
	if a.Key == "" {
		return
	}
	dst[prefix+a.Key] = h.plain(v)
}

// plain converts a value to something that encodes as JSON the way a reader expects.
func (h *bufHandler) plain(v slog.Value) any {
	switch v.Kind() {
	case slog.KindString:
		return h.rl.m.redact(v.String())
	case slog.KindInt64:
		return v.Int64()
	case slog.KindUint64:
		return v.Uint64()
	case slog.KindFloat64:
		return v.Float64()
	case slog.KindBool:
		return v.Bool()
	case slog.KindDuration:
		return v.Duration().String()
	case slog.KindTime:
		return v.Time().UTC().Format(time.RFC3339Nano)
	}
	var s string
	switch x := v.Any().(type) {
	case error:
		s = x.Error()
	case fmt.Stringer:
		s = x.String()
	default:
		s = fmt.Sprint(x)
	}
	return h.rl.m.redact(strings.TrimSpace(s))
}
