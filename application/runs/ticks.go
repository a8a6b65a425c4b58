package runs

import (
	"context"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/application/execute"
)

// SubmitTicks submits the runs of a batch of schedule ticks — every request has Tick set,
// all of one term, at most MaxTickBatch — through the same checks as Submit (each is its
// own submit span), then stores the ones that passed with one Store.CreateTicks, so a
// burst of due ticks pays one transaction per batch instead of one per tick. res[i] and
// errs[i] answer reqs[i]: a request the checks refused has its error and stored nothing.
// err is the batch's — the store's (run.ErrLeaseLost when the term moved on, an
// unanswered history) — and then nothing of the batch was stored.
func (s *Service) SubmitTicks(ctx context.Context, reqs []SubmitRequest) (res []SubmitResult, errs []error, err error) {
	if len(reqs) > MaxTickBatch {
		return nil, nil, fmt.Errorf("submit %d ticks: a batch holds at most %d", len(reqs), MaxTickBatch)
	}
	for _, req := range reqs {
		if req.Tick == nil {
			return nil, nil, errors.New("submit ticks: a request has no tick")
		}
	}
	res, errs = make([]SubmitResult, len(reqs)), make([]error, len(reqs))
	spans := make([]execute.Span, len(reqs))
	ctxs := make([]context.Context, len(reqs))
	builds := make([]*built, len(reqs))
	defer func() {
		for i, span := range spans {
			if b := builds[i]; b != nil {
				b.release()
			}
			switch {
			case err != nil: // res and errs are nil then

				span.Fail(s.deps.Redactor.Redact(err.Error()))
			case errs[i] != nil:
				span.Fail(s.deps.Redactor.Redact(errs[i].Error()))
			case res[i].RunID != "":
				span.SetAttrs(execute.A("run_id", res[i].RunID), execute.A("status", res[i].Status),
					execute.A("replayed", res[i].Replayed))
			}
			span.End()
		}
	}()
	var batch []TickCreate
	var at []int // batch[j] is reqs[at[j]]
	for i, req := range reqs {
		ctxs[i], spans[i] = s.deps.Tracer.Start(ctx, "submit", execute.A("trigger_kind", req.TriggerKind))
		b, r, err := s.build(ctxs[i], spans[i], req)
		switch {
		case err != nil:
			errs[i] = err
		case b == nil: // proposed: a change request answers it
			res[i] = r
		default:
			builds[i] = b
			batch = append(batch, TickCreate{Rec: b.rec, Tick: *req.Tick})
			at = append(at, i)
		}
	}
	if len(batch) == 0 {
		return res, errs, nil
	}
	created, err := s.deps.Store.CreateTicks(ctx, batch)
	if err != nil {
		return nil, nil, err
	}
	for j, cr := range created {
		i := at[j]
		if cr.Refused != nil {
			errs[i] = cr.Refused
			continue
		}
		res[i], errs[i] = s.stored(ctxs[i], builds[i], cr)
	}
	return res, errs, nil
}
