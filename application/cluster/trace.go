package cluster

import (
	"context"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/run"
)

// Tracing (SPEC §14.6). A run stores the traceparent of its submission, so whichever
// member claims it starts its spans as children of the submit span: one trace runs from
// the request on one member to the execution on another. Each claimed run or shard gets a
// "claim" span (the claim is one statement for a batch, but each run joins its own
// trace), an attempt span that lasts the execution with its pages as events, and a
// "finish" span around the write that ends it.

// traceAttrs name the execution on its spans.
func (m *Member) traceAttrs(e *execution) []execute.Attr {
	c := e.claim
	attrs := []execute.Attr{execute.A("run_id", c.ID), execute.A("pipeline", c.Name),
		execute.A("pool", c.Pool), execute.A("attempt", c.Attempt), execute.A("instance_id", m.cfg.InstanceID)}
	if e.shard != nil {
		attrs = append(attrs, execute.A("shard", e.shard.Ref.Index), execute.A("shards", e.shard.Slice.Count))
	}
	return attrs
}

// startTrace opens the claim and attempt spans of a claimed execution and answers the
// context its work runs under (the member's root, carrying the attempt span).
func (m *Member) startTrace(e *execution) context.Context {
	t := m.deps.Tracer
	base := t.WithTraceparent(m.root, e.claim.Traceparent)
	attrs := m.traceAttrs(e)
	waited := m.clock.Now().Sub(e.claim.CreatedAt).Milliseconds()
	_, claim := t.Start(base, "claim", append(attrs, execute.A("wait_ms", max(waited, 0)))...)
	claim.End()
	name := "run.attempt"
	if e.shard != nil {
		name = "shard.attempt"
	}
	ctx, span := t.Start(base, name, attrs...)
	e.span = span
	return ctx
}

// endTrace records how the execution was settled on its attempt span and closes it.
func endTrace(e *execution, res result) {
	switch res.act {
	case actFinish:
		e.span.SetAttrs(execute.A("status", res.outcome.Status))
		if res.outcome.Status == string(run.Failed) {
			e.span.SetAttrs(execute.A("error_code", res.outcome.ErrorCode))
			e.span.Fail(res.outcome.ErrorMessage)
		}
	case actHandBack, actPark:
		e.span.SetAttrs(execute.A("outcome", "handed_back"))
	case actDiscard:
		e.span.SetAttrs(execute.A("outcome", "lease_lost"))
	case actSharded:
		e.span.SetAttrs(execute.A("outcome", "sharded"))
	}
	e.span.SetAttrs(execute.A("rows_written", res.stats.RowsWritten), execute.A("pages", res.stats.Pages))
	e.span.End()
}

// startFinish opens the span of the write that ends the execution.
func (m *Member) startFinish(e *execution, o Outcome) execute.Span {
	attrs := []execute.Attr{execute.A("run_id", e.claim.ID), execute.A("status", o.Status)}
	if e.shard != nil {
		attrs = append(attrs, execute.A("shard", e.shard.Ref.Index))
	}
	if o.ErrorCode != "" {
		attrs = append(attrs, execute.A("error_code", o.ErrorCode))
	}
	_, span := m.deps.Tracer.Start(e.ctx, "finish", attrs...)
	return span
}
