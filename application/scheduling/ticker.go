package scheduling

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/templates"
	"github.com/sluicehq/sluice/domain/pool"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/schedule"
)

// maxReasonLen bounds the reason of a tick whose run was refused.
const maxReasonLen = 300

// Pass handles every due tick of every schedule at the clock's now, under the leader
// term epoch, and returns the earliest instant a schedule fires at next (zero: none).
// Each tick commits in its own transaction; Config.PassWorkers schedules are handled at
// once (one schedule's ticks stay in order on one worker), so a burst of due schedules
// keeps several transactions in flight instead of waiting on each commit in turn. Each
// tick still takes its own pipeline lock, overlap decision and term fence in the store.
// A lost term (run.ErrLeaseLost) and an unanswered history end the pass with that error;
// the ticks it left are still due and the next pass handles them. Any other failure of
// one schedule is logged and the pass goes on with the others.
func (s *Service) Pass(ctx context.Context, epoch int64) (time.Time, error) {
	list, err := s.deps.Store.ListSchedules(ctx)
	if err != nil {
		return time.Time{}, err
	}
	now := s.deps.Clock()
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		mu   sync.Mutex
		next time.Time
		stop error
		wg   sync.WaitGroup
	)
	jobs := make(chan *Schedule)
	for range min(max(s.cfg.PassWorkers, 1), max(len(list), 1)) {
		wg.Go(func() {
			for sc := range jobs {
				n, err := s.tickSchedule(ctx, sc, epoch, now)
				mu.Lock()
				switch {
				case retryLater(err):
					if stop == nil {
						stop = err
						cancel(err)
					}
				case err != nil:
					s.deps.Log.ErrorContext(ctx, "schedule tick failed; it is retried on the next pass",
						"schedule_id", sc.ID, "error", err.Error())
				}
				if !n.IsZero() && (next.IsZero() || n.Before(next)) {
					next = n
				}
				mu.Unlock()
			}
		})
	}
feed:
	for _, sc := range list {
		select {
		case jobs <- sc:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if stop == nil {
		stop = context.Cause(ctx) // the caller's cancel, seen between schedules
	}
	if stop != nil {
		return time.Time{}, stop
	}
	return next, nil
}

// retryLater: errors after which ticks must wait (another leader, no history, shutdown).
func retryLater(err error) bool {
	return errors.Is(err, run.ErrLeaseLost) || errors.Is(err, run.ErrUnavailable) ||
		errors.Is(err, runs.ErrDraining) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// tickSchedule handles the due ticks of one schedule and returns its next instant.
func (s *Service) tickSchedule(ctx context.Context, sc *Schedule, epoch int64, now time.Time) (time.Time, error) {
	spec, err := schedule.Parse(sc.Cron)
	if err != nil {
		return time.Time{}, fmt.Errorf("cron %q: %w", sc.Cron, err)
	}
	loc, err := schedule.LoadZone(sc.Timezone)
	if err != nil {
		return time.Time{}, err
	}
	after := sc.LastTick
	if after.IsZero() {
		if after, err = schedule.StartBound(sc.StartDate, sc.CreatedAt, loc); err != nil {
			return time.Time{}, err
		}
	}
	next := spec.Next(now, loc)
	create, skipped, summary := schedule.DueTicks(spec, loc, after, now, sc.Catchup, sc.MaxCatchupRuns)
	reason := schedule.ReasonMissed
	if sc.Paused {
		// Nothing is created while paused; every due tick says why.
		reason = schedule.ReasonPaused
		skipped, create = append(skipped, create...), nil
	}
	if summary != nil {
		t := Tick{ScheduleID: sc.ID, Instant: summary.Last, Status: schedule.OutcomeSkipped, Reason: reason,
			SummaryCount: summary.Count, SummaryFirst: summary.First, Epoch: epoch}
		if err := s.record(ctx, t); err != nil {
			return next, err
		}
	}
	for _, at := range skipped {
		t := Tick{ScheduleID: sc.ID, Instant: at, Status: schedule.OutcomeSkipped, Reason: reason, Epoch: epoch}
		if err := s.record(ctx, t); err != nil {
			return next, err
		}
	}
	if n := len(skipped); n > 0 || summary != nil {
		folded := 0
		if summary != nil {
			folded = summary.Count
		}
		s.deps.Log.InfoContext(ctx, "schedule ticks recorded skipped", "schedule_id", sc.ID, "reason", reason,
			"listed", n, "folded_into_summary", folded)
	}
	var params map[string]string
	if len(create) > 0 {
		if params, err = s.openParams(ctx, sc); err != nil {
			// Params this server cannot open (no or another vault key): every due tick
			// says why, rather than the pass failing on it every second.
			for _, at := range create {
				if err := s.refused(ctx, sc, at, epoch, err); err != nil {
					return next, err
				}
			}
			return next, nil
		}
	}
	for _, at := range create {
		if err := s.createTick(ctx, sc, params, loc, at, epoch); err != nil {
			return next, err
		}
	}
	return next, nil
}

// refused records a tick whose run could not be submitted as skipped, with the reason.
func (s *Service) refused(ctx context.Context, sc *Schedule, at time.Time, epoch int64, cause error) error {
	reason := "run refused: " + cause.Error()
	var unserved *pool.UnservedError
	if errors.As(cause, &unserved) {
		reason = schedule.ReasonPoolUnserved(unserved.Pool)
	}
	if len(reason) > maxReasonLen {
		reason = reason[:maxReasonLen] + "…"
	}
	s.deps.Log.WarnContext(ctx, "schedule tick refused", "schedule_id", sc.ID, "instant", at.UTC().Format(time.RFC3339),
		"reason", reason)
	return s.record(ctx, Tick{ScheduleID: sc.ID, Instant: at.UTC(), Status: schedule.OutcomeSkipped, Reason: reason, Epoch: epoch})
}

// record writes a skipped tick and counts it when it is new.
func (s *Service) record(ctx context.Context, t Tick) error {
	inserted, err := s.deps.Store.RecordTick(ctx, t)
	if err != nil {
		return err
	}
	if inserted {
		s.deps.Metrics.ScheduleTick(string(schedule.OutcomeSkipped))
		s.deps.Log.DebugContext(ctx, "schedule tick skipped", "schedule_id", t.ScheduleID,
			"instant", t.Instant.UTC().Format(time.RFC3339), "reason", t.Reason, "summary_count", t.SummaryCount)
	}
	return nil
}

// schedulerPrincipal submits the runs of ticks.
var schedulerPrincipal = runs.Principal{Name: "scheduler", Role: runs.Admin}

// createTick submits the run of one tick through the template entry point; the store
// decides overlap and records the tick with the run. A run the funnel refuses (a pool
// nobody serves, a config the template no longer makes valid) is recorded skipped with
// the reason, so one bad tick never blocks the next.
func (s *Service) createTick(ctx context.Context, sc *Schedule, params map[string]string, loc *time.Location, at time.Time, epoch int64) error {
	instant := at.UTC()
	res, err := s.deps.Templates.Run(ctx, schedulerPrincipal, sc.TemplateID, templates.RunRequest{
		Params: params, Pool: sc.Pool, Labels: sc.Labels, RunKey: schedule.RunKey(sc.ID, instant),
		TriggerKind: run.TriggerSchedule, Logical: &instant, Zone: loc, Serial: sc.Overlap == schedule.OverlapQueue,
		Tick: &runs.Tick{ScheduleID: sc.ID, Instant: instant, Overlap: sc.Overlap, Epoch: epoch},
	})
	if err != nil {
		if retryLater(err) {
			return err
		}
		return s.refused(ctx, sc, instant, epoch, err)
	}
	switch {
	case res.Skipped != "":
		s.deps.Metrics.ScheduleTick(string(schedule.OutcomeSkipped))
		s.deps.Log.InfoContext(ctx, "schedule tick skipped", "schedule_id", sc.ID,
			"instant", instant.Format(time.RFC3339), "reason", res.Skipped)
	case res.Replayed:
		// Recorded by an earlier pass or leader: nothing new happened.
	case res.Status == string(run.Queued):
		s.deps.Metrics.ScheduleTick(string(schedule.OutcomeQueued))
	default:
		s.deps.Metrics.ScheduleTick(string(schedule.OutcomeCreated))
	}
	return nil
}
