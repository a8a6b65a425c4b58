package scheduling

import (
	"cmp"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/schedule"
)

// schedulerPrincipal submits the runs of ticks.
var schedulerPrincipal = runs.Principal{Name: "scheduler", Role: runs.Admin}

// batchSize is how many ticks one transaction creates: Config.TickBatch with the batch
// funnel, one at a time without it (each through Templates.Run).
func (s *Service) batchSize() int {
	if s.deps.Ticks == nil {
		return 1
	}
	return min(max(s.cfg.TickBatch, 1), runs.MaxTickBatch)
}

// jobs packs the schedules' due ticks into jobs of batches. A job's batches are created
// one after the other by one worker, and every tick of a schedule is in one job, so no
// two batches in flight hold ticks of one schedule; small schedules share a batch.
//
// Batches are packed by template: the runs of one template share a pipeline key, whose
// lock a batch holds until it commits, so batches in flight at once mostly hold
// different keys instead of waiting on each other's. One tick at a time keeps the list
// order, which spreads a template's ticks apart for the same reason.
func jobs(perSchedule [][]due, size int) [][][]due {
	if size > 1 {
		slices.SortStableFunc(perSchedule, func(a, b []due) int {
			return cmp.Compare(a[0].sc.TemplateID, b[0].sc.TemplateID)
		})
	}
	var out [][][]due
	var cur []due
	for _, ticks := range perSchedule {
		if len(cur)+len(ticks) > size && len(cur) > 0 {
			out, cur = append(out, [][]due{cur}), nil
		}
		if len(ticks) <= size {
			cur = append(cur, ticks...)
			continue
		}
		var job [][]due
		for len(ticks) > 0 {
			n := min(len(ticks), size)
			job, ticks = append(job, ticks[:n]), ticks[n:]
		}
		out = append(out, job)
	}
	if len(cur) > 0 {
		out = append(out, [][]due{cur})
	}
	return out
}

// createAll creates the due ticks, Config.PassWorkers jobs at once. The first
// retryLater error stops the feed and is returned once the jobs in flight ended.
func (s *Service) createAll(ctx context.Context, perSchedule [][]due, epoch int64) error {
	work := jobs(perSchedule, s.batchSize())
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu   sync.Mutex
		stop error
		wg   sync.WaitGroup
	)
	feed := make(chan [][]due)
	for range min(max(s.cfg.PassWorkers, 1), max(len(work), 1)) {
		wg.Go(func() {
			for job := range feed {
				for _, batch := range job {
					err := s.createBatch(ctx, batch, epoch)
					if err == nil {
						continue
					}
					if retryLater(err) {
						mu.Lock()
						if stop == nil {
							stop = err
							cancel(err)
						}
						mu.Unlock()
						break
					}
					// Its later batches still go: their ticks are decided on their own.
					s.deps.Log.ErrorContext(ctx, "schedule tick batch failed; it is retried on the next pass",
						"ticks", len(batch), "first_schedule_id", batch[0].sc.ID, "error", err.Error())
					s.leftOver()
				}
			}
		})
	}
send:
	for _, job := range work {
		select {
		case feed <- job:
		case <-ctx.Done():
			break send
		}
	}
	close(feed)
	wg.Wait()
	if stop == nil {
		stop = context.Cause(ctx)
	}
	return stop
}

// createBatch creates one batch of ticks and accounts for each as createTick did for
// one: metrics and logs per tick, a refused run recorded skipped with the reason.
func (s *Service) createBatch(ctx context.Context, batch []due, epoch int64) error {
	res, errs, err := s.submitBatch(ctx, batch, epoch)
	if err != nil {
		return err
	}
	var refused []Tick
	var stop error
	for i, d := range batch[:len(res)] { // the one-at-a-time path stops early
		switch {
		case errs[i] == nil:
			s.counted(ctx, d, res[i])
		case retryLater(errs[i]):
			// The ticks after it wait for the next pass; those before are stored.
			stop = errs[i]
		default:
			refused = append(refused, s.refusal(ctx, d.sc, d.at, epoch, errs[i]))
		}
		if stop != nil {
			break
		}
	}
	if err := s.recordAll(ctx, refused); err != nil {
		return err
	}
	return stop
}

// submitBatch submits the runs of a batch through the template entry point and the one
// funnel: with Deps.Ticks, every tick's checks and then one store transaction; without,
// Templates.Run one tick after the other (stopping at the first retryLater error).
func (s *Service) submitBatch(ctx context.Context, batch []due, epoch int64) ([]runs.SubmitResult, []error, error) {
	reqs := make([]templates.SubmissionRequest, len(batch))
	for i, d := range batch {
		at := d.at
		reqs[i] = templates.SubmissionRequest{TemplateID: d.sc.TemplateID, RunRequest: templates.RunRequest{
			Params: d.params, Pool: d.sc.Pool, Labels: d.sc.Labels, RunKey: schedule.RunKey(d.sc.ID, at),
			TriggerKind: run.TriggerSchedule, Logical: &at, Zone: d.loc, Serial: d.sc.Overlap == schedule.OverlapQueue,
			Tick: &runs.Tick{ScheduleID: d.sc.ID, Instant: at, Overlap: d.sc.Overlap, Epoch: epoch},
		}}
	}
	res, errs := make([]runs.SubmitResult, len(batch)), make([]error, len(batch))
	if s.deps.Ticks == nil {
		for i, r := range reqs {
			if res[i], errs[i] = s.deps.Templates.Run(ctx, schedulerPrincipal, r.TemplateID, r.RunRequest); retryLater(errs[i]) {
				return res[:i+1], errs[:i+1], nil
			}
		}
		return res, errs, nil
	}
	subs, subErrs := s.deps.Templates.Submissions(ctx, schedulerPrincipal, reqs)
	var ok []runs.SubmitRequest
	var at []int
	for i, err := range subErrs {
		if errs[i] = err; err == nil {
			ok, at = append(ok, subs[i]), append(at, i)
		}
	}
	if len(ok) == 0 {
		return res, errs, nil
	}
	got, gotErrs, err := s.deps.Ticks.SubmitTicks(ctx, ok)
	if err != nil {
		return nil, nil, err
	}
	for j, i := range at {
		res[i], errs[i] = got[j], gotErrs[j]
	}
	return res, errs, nil
}

// counted logs and counts what became of one tick whose run was submitted.
func (s *Service) counted(ctx context.Context, d due, res runs.SubmitResult) {
	switch {
	case res.Skipped != "":
		s.deps.Metrics.ScheduleTick(string(schedule.OutcomeSkipped))
		s.deps.Log.InfoContext(ctx, "schedule tick skipped", "schedule_id", d.sc.ID,
			"instant", d.at.Format(time.RFC3339), "reason", res.Skipped)
	case res.Replayed:
		// Recorded by an earlier pass or leader: nothing new happened.
	case res.Status == string(run.Queued):
		s.deps.Metrics.ScheduleTick(string(schedule.OutcomeQueued))
	default:
		s.deps.Metrics.ScheduleTick(string(schedule.OutcomeCreated))
	}
}
