package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/state"
)

// progressEvery throttles progress writes: counters are for people watching, and one
// write per page would put a statement per page on the history.
const progressEvery = time.Second

// execution is one claimed run, or one claimed shard of a run, executing here.
type execution struct {
	claim Claimed // for a shard: its run, with the shard's epoch, attempt and earlier running time
	ref   Ref     // runs only
	// shard is the shard this execution runs; nil for a run.
	shard  *ClaimedShard
	ctx    context.Context
	cancel context.CancelCauseFunc
	span   execute.Span // the attempt's span (see startTrace)
	lost   atomic.Bool  // the lease is gone: whatever happens next, the result is discarded

	mu       sync.Mutex
	progress Progress // the newest counters, for a hand-back
}

// key names the execution among those of the member: the run id, or the shard's state
// key ({run_id}::{index}).
func (e *execution) key() string {
	if e.shard != nil {
		return state.ShardKey(e.claim.ID, e.shard.Ref.Index)
	}
	return e.claim.ID
}

// slice is the part of the source this execution reads; nil for a whole run.
func (e *execution) slice() *execute.ShardSlice {
	if e.shard == nil {
		return nil
	}
	sl := e.shard.Slice
	return &sl
}

// stop fires the run's token; the first cause wins.
func (e *execution) stop(cause error) { e.cancel(cause) }

// loseLease marks the lease lost and stops the run; it wins over any earlier cause.
func (e *execution) loseLease(why string) {
	e.lost.Store(true)
	e.cancel(fmt.Errorf("%s: %w", why, run.ErrLeaseLost))
}

// cause is why the token fired, or nil while it has not.
func (e *execution) cause() error {
	if e.ctx.Err() == nil {
		return nil
	}
	return context.Cause(e.ctx)
}

func (e *execution) setProgress(p Progress) {
	e.mu.Lock()
	e.progress = p
	e.mu.Unlock()
}

func (e *execution) lastProgress() Progress {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.progress
}

// action is how a run's execution is settled with the history.
type action int

const (
	actFinish   action = iota // a terminal outcome: Finish
	actHandBack               // stopped for a drain: back to pending, no attempt spent
	actPark                   // stopped for an outage: hand back once the history answers
	actDiscard                // the lease is lost: the result belongs to nobody
	actSharded                // the run was split into shards: the shards carry it on
)

type result struct {
	act     action
	outcome Outcome
	stats   Progress
	// cause is the error a failed run failed with, when there is one: whether a
	// connector marked it transient decides an `on: transient` retry.
	cause error
}

// work executes one run and settles it. Nothing in here may crash the process: a panic
// fails the run with pipeline_error.
func (m *Member) work(e *execution) {
	defer m.release(e)
	log, rl := m.runLogger(e)
	res := m.execute(e, log)
	// Every line is persisted no later than the run turns terminal, so a reader that sees
	// the terminal status has seen every line: a finish carries the rest in its own
	// transaction; any other ending flushes them now.
	if res.act == actFinish {
		res.outcome.Logs = rl.closeTaking()
	} else {
		rl.close()
	}
	m.settle(e, res)
	endTrace(e, res)
}

// execute loads the config and runs it; it turns every way of ending into a result.
func (m *Member) execute(e *execution, log *slog.Logger) (res result) {
	start := m.clock.Now()
	c := e.claim
	defer func() {
		if v := recover(); v != nil {
			m.log.Error("run worker panicked", "run_id", c.ID, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			p := e.lastProgress()
			res = m.failed(run.CodePipelineError, fmt.Sprintf("internal error: %v", v), p)
		}
	}()
	maxAttempts := c.MaxAttempts
	if maxAttempts == 0 {
		maxAttempts = m.cfg.MaxAttempts
	}
	if e.shard != nil {
		log.Info("shard started", "pipeline", c.Name, "pool", c.Pool, "shards", e.shard.Slice.Count, "attempt", c.Attempt, "max_attempts", maxAttempts)
	} else {
		log.Info("run started", "pipeline", c.Name, "pool", c.Pool, "attempt", c.Attempt, "max_attempts", maxAttempts)
	}

	var timeout time.Duration
	if c.TimeoutSecs > 0 {
		timeout = time.Duration(c.TimeoutSecs)*time.Second - time.Duration(c.ElapsedMS)*time.Millisecond
		if timeout <= 0 {
			msg := fmt.Sprintf("timeout_secs %d was used up by earlier attempts (%s ran)",
				c.TimeoutSecs, time.Duration(c.ElapsedMS)*time.Millisecond)
			log.Error("run failed", "code", run.CodeTimeout, "error", msg)
			return m.failed(run.CodeTimeout, msg, Progress{})
		}
	}

	text, err := m.openClaimed(e.ctx, c)
	if errors.Is(err, run.ErrUnavailable) {
		// The history, not the vault, failed: the run is not at fault and spends nothing.
		log.Warn("the history did not answer while reading the run's sealed secrets; handing the run back",
			"error", m.redact(err.Error()))
		return result{act: actPark, stats: Progress{}}
	}
	if err != nil {
		code, msg := m.codeOf(err, run.CodeVaultTampered)
		log.Error("run failed: sealed config", "code", code, "error", msg)
		return m.failed(code, msg, Progress{ElapsedMS: m.since(start)})
	}
	cfg, err := m.deps.Loader.Load(e.ctx, []byte(text), execute.LoadOptions{
		Network:       true,
		AllowFileDirs: m.cfg.AllowFileDirs,
		Logical:       c.LogicalAt,
		Zone:          m.cfg.Zone,
		RunDate:       c.RunDate,
	})
	if err == nil && cfg == nil {
		err = errors.New("the loader returned no config")
	}
	if err != nil {
		if res, stopped := m.stopped(e, Progress{ElapsedMS: m.since(start)}); stopped {
			return res
		}
		code, msg := m.codeOf(err, run.CodeConfigError)
		log.Error("run failed: config", "code", code, "error", msg)
		return m.failedBy(err, code, msg, Progress{ElapsedMS: m.since(start)})
	}
	if e.shard == nil && c.ShardCount > 1 {
		if res, done := m.coordinate(e, log, cfg, start); done {
			return res
		}
	}
	key, store, err := m.stateFor(e.ctx, cfg, c)
	if e.shard != nil {
		key = e.key() // each shard keeps its own bookmark or watermark (SPEC §1.6)
	}
	if err != nil {
		code, msg := m.codeOf(err, run.CodeConfigError)
		log.Error("run failed: state", "code", code, "error", msg)
		return m.failedBy(err, code, msg, Progress{ElapsedMS: m.since(start)})
	}

	stats, err := m.deps.Runner.Run(e.ctx, execute.Job{
		Config:   cfg,
		StateKey: key,
		Run:      e.key(), // an exactly-once sink records it when the read completes
		State:    store,
		Timeout:  timeout,
		Shard:    e.slice(),
		Progress: m.progressFunc(e),
		Log:      log,
		Pipeline: c.Name,
		Span:     e.span,
	})
	p := toProgress(stats)
	e.setProgress(p)
	return m.classify(e, log, p, err)
}

// classify maps what the runner answered (and why the token fired) to a result.
func (m *Member) classify(e *execution, log *slog.Logger, p Progress, err error) result {
	if e.lost.Load() {
		return result{act: actDiscard, stats: p}
	}
	if err == nil {
		log.Info("run completed", "rows_read", p.RowsRead, "rows_written", p.RowsWritten, "pages", p.Pages,
			"elapsed_ms", p.ElapsedMS)
		return result{act: actFinish, outcome: Outcome{Status: string(run.Completed), Stats: p}, stats: p}
	}
	var f *execute.Failure
	if !errors.As(err, &f) {
		if res, stopped := m.stopped(e, p); stopped {
			log.Info("run stopped", "reason", e.cause().Error(), "rows_written", p.RowsWritten, "pages", p.Pages)
			return res
		}
	}
	code, msg := m.codeOf(err, run.CodePipelineError)
	// Clipped as the stored error is: a message can quote what a request sent, and this
	// line goes to the run's log in the history and to the server's log.
	log.Error("run failed", "code", code, "error", run.ClipError(msg))
	return m.failedBy(err, code, msg, p)
}

// stopped is the result of a run whose token fired, by cause; ok=false when it did not.
func (m *Member) stopped(e *execution, p Progress) (res result, ok bool) {
	switch cause := e.cause(); {
	case cause == nil:
		return result{}, false
	case e.lost.Load() || errors.Is(cause, run.ErrLeaseLost):
		return result{act: actDiscard, stats: p}, true
	case errors.Is(cause, errCancelRequested):
		// Rows confirmed so far stay written; the stats say how many.
		return result{act: actFinish, outcome: Outcome{Status: string(run.Cancelled), Stats: p}, stats: p}, true
	case errors.Is(cause, errOutage):
		return result{act: actPark, stats: p}, true
	default: // drain or stop
		return result{act: actHandBack, stats: p}, true
	}
}

// failedBy is failed with the error the run failed with, whose transient mark decides an
// `on: transient` retry (a directive or a state store that could not be reached, say).
func (m *Member) failedBy(cause error, code run.ErrorCode, msg string, p Progress) result {
	res := m.failed(code, msg, p)
	res.cause = cause
	return res
}

func (m *Member) failed(code run.ErrorCode, msg string, p Progress) result {
	return result{act: actFinish, stats: p, outcome: Outcome{
		Status: string(run.Failed), ErrorCode: string(code), ErrorMessage: run.ClipError(m.redact(msg)), Stats: p}}
}

// codeOf reads the run error code an error carries, or fallback, and the message with
// the row data it may quote withheld (SPEC §14.1: run errors and run logs are read by
// every viewer of the run).
func (m *Member) codeOf(err error, fallback run.ErrorCode) (run.ErrorCode, string) {
	code, msg := errorOf(err, fallback)
	if m.deps.Withhold != nil {
		msg = m.deps.Withhold(msg)
	}
	return code, msg
}

// errorOf reads the run error code an error carries, or fallback, and its message.
func errorOf(err error, fallback run.ErrorCode) (run.ErrorCode, string) {
	var f *execute.Failure
	if errors.As(err, &f) && f.Code.Valid() {
		return f.Code, err.Error()
	}
	var re *run.Error
	if errors.As(err, &re) && re.Code.Valid() {
		if err == error(re) && re.Message != "" {
			return re.Code, re.Message
		}
		return re.Code, err.Error()
	}
	return fallback, err.Error()
}

// stateFor returns the state key (state.key, else {tenant}/{name}) and, for incremental
// configs, the store its bookmarks live in.
func (m *Member) stateFor(ctx context.Context, cfg *pipeline.Config, c Claimed) (string, execute.StateStore, error) {
	key := cfg.State.Key
	if key == "" {
		name := c.Name
		if name == "" {
			name = cfg.Name
		}
		key = state.Key(c.Tenant, name)
	}
	if cfg.Replication.Type != pipeline.Incremental {
		return key, nil, nil
	}
	switch cfg.State.Type {
	case pipeline.StateDefault, pipeline.StateHistory:
		if m.deps.State == nil {
			return "", nil, &run.Error{Code: run.CodeConfigError,
				Message: "state: this server keeps no bookmarks in its history; incremental runs cannot execute here"}
		}
		return key, m.deps.State, nil
	}
	if m.deps.OpenState == nil {
		return "", nil, &run.Error{Code: run.CodeConfigError, Message: fmt.Sprintf(
			"state.type %q is not available on this server; use state: {type: history}", cfg.State.Type)}
	}
	st, err := m.deps.OpenState(ctx, cfg.State)
	if err != nil {
		return "", nil, fmt.Errorf("state.type %s: %w", cfg.State.Type, err)
	}
	return key, st, nil
}

// progressFunc writes counters at most once per progressEvery, fenced. A lost lease stops
// the run here at once: its output belongs to whoever owns it now.
//
// The first write waits a full interval too: a run that ends within it gets its counters
// from Finish, and a history busy with short runs is spared a statement per run.
func (m *Member) progressFunc(e *execution) func(execute.Stats) {
	last := m.clock.Now()
	return func(s execute.Stats) {
		p := toProgress(s)
		e.setProgress(p)
		now := m.clock.Now()
		if now.Sub(last) < progressEvery {
			return
		}
		last = now
		ctx, cancel := m.stmt(m.root)
		defer cancel()
		var err error
		if e.shard != nil {
			err = m.deps.Shards.ShardProgress(ctx, m.cfg.InstanceID, e.shard.Ref, p)
		} else {
			err = m.deps.Store.Progress(ctx, m.cfg.InstanceID, e.ref, p)
		}
		switch {
		case errors.Is(err, run.ErrLeaseLost):
			m.log.Warn("lease lost while recording progress; stopping the run", "run_id", e.claim.ID)
			e.loseLease("progress")
		case err != nil:
			m.log.Warn("recording progress failed", "run_id", e.claim.ID, "error", m.redact(err.Error()))
		}
	}
}

func toProgress(s execute.Stats) Progress {
	return Progress{RowsRead: s.RowsRead, RowsWritten: s.RowsWritten, Pages: s.Pages, Bytes: s.Bytes,
		ElapsedMS: s.Elapsed.Milliseconds()}
}

func (m *Member) since(t time.Time) int64 { return m.clock.Now().Sub(t).Milliseconds() }
