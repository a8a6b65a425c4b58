package scheduling

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/pool"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/schedule"
)

// maxReasonLen bounds the reason of a tick whose run was refused.
const maxReasonLen = 300

// Pass handles every due tick of every schedule at the clock's now, under the leader
// term epoch, and returns the earliest instant a schedule fires at next (zero: none).
//
// It first works out every schedule's due ticks (DueTicks: missed and paused ones are
// recorded skipped, in batches of one transaction each), then creates the rest in
// batches (Config.TickBatch ticks, one Store.CreateTicks transaction each, every tick
// with its own funnel checks, overlap decision and fence). Config.PassWorkers batches
// are in flight at once; one schedule's ticks stay in order in one worker's batches, so
// each tick is decided as it would be one after the other. A lost term
// (run.ErrLeaseLost) and an unanswered history end the pass with that error; the ticks
// it left are still due and the next pass handles them. Any other failure is logged and
// the pass goes on with the other schedules and batches.
func (s *Service) Pass(ctx context.Context, epoch int64) (time.Time, error) {
	list, err := s.schedules(ctx, epoch)
	if err != nil {
		return time.Time{}, err
	}
	next, err := s.passOver(ctx, list, epoch)
	if err != nil {
		s.leftOver()
		return time.Time{}, err
	}
	return next, nil
}

// passOver is Pass over the loaded schedules.
func (s *Service) passOver(ctx context.Context, list []*Schedule, epoch int64) (time.Time, error) {
	now := s.deps.Clock()
	var (
		next    time.Time
		skipped []Tick
		notes   []skipNote
		creates [][]due
		lasts   = map[*Schedule]pass{}
	)
	notBefore := s.notBefore()
	for _, sc := range list {
		if nb, ok := notBefore[sc]; ok && now.Before(nb) {
			// Nothing of it is due yet: no cron to parse, no ticks to work out.
			next = earliest(next, nb)
			continue
		}
		p, err := s.plan(ctx, sc, epoch, now)
		if err != nil {
			// Reading the schedules again would not help: this one is logged every pass.
			s.deps.Log.ErrorContext(ctx, "schedule tick failed; it is retried on the next pass",
				"schedule_id", sc.ID, "error", err.Error())
			continue
		}
		next = earliest(next, p.next)
		lasts[sc] = pass{last: p.last, next: p.next}
		skipped = append(skipped, p.skipped...)
		if p.note.listed > 0 || p.note.folded > 0 {
			notes = append(notes, p.note)
		}
		if len(p.create) > 0 {
			creates = append(creates, p.create)
		}
	}
	if err := s.recordAll(ctx, skipped); err != nil {
		return time.Time{}, err
	}
	for _, n := range notes {
		s.deps.Log.InfoContext(ctx, "schedule ticks recorded skipped", "schedule_id", n.id, "reason", n.reason,
			"listed", n.listed, "folded_into_summary", n.folded)
	}
	if err := s.createAll(ctx, creates, epoch); err != nil {
		return time.Time{}, err
	}
	if err := context.Cause(ctx); err != nil {
		return time.Time{}, err // the caller's cancel, seen between batches
	}
	if !s.loaded.stale.Load() {
		s.advanced(lasts)
	}
	return next, nil
}

// earliest is the earlier of two instants, zero standing for none.
func earliest(a, b time.Time) time.Time {
	if a.IsZero() || (!b.IsZero() && b.Before(a)) {
		return b
	}
	return a
}

// retryLater: errors after which ticks must wait (another leader, no history, shutdown).
func retryLater(err error) bool {
	return errors.Is(err, run.ErrLeaseLost) || errors.Is(err, run.ErrUnavailable) ||
		errors.Is(err, runs.ErrDraining) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// due is one tick whose run is to be created.
type due struct {
	sc     *Schedule
	params map[string]string
	loc    *time.Location
	at     time.Time // UTC
}

// skipNote is the log line of a schedule's skipped ticks.
type skipNote struct {
	id, reason     string
	listed, folded int
}

// plan is what one schedule's due ticks become in a pass.
type plan struct {
	next    time.Time
	last    time.Time // the newest due instant: the schedule's LastTick once all are recorded
	skipped []Tick    // recorded without a run: missed, paused, refused
	note    skipNote
	create  []due // in instant order
}

// plan works out the due ticks of one schedule and its next instant.
func (s *Service) plan(ctx context.Context, sc *Schedule, epoch int64, now time.Time) (plan, error) {
	spec, err := schedule.Parse(sc.Cron)
	if err != nil {
		return plan{}, fmt.Errorf("cron %q: %w", sc.Cron, err)
	}
	loc, err := schedule.LoadZone(sc.Timezone)
	if err != nil {
		return plan{}, err
	}
	after := sc.LastTick
	if after.IsZero() {
		if after, err = schedule.StartBound(sc.StartDate, sc.CreatedAt, loc); err != nil {
			return plan{}, err
		}
	}
	p := plan{next: spec.Next(now, loc)}
	create, skipped, summary := schedule.DueTicks(spec, loc, after, now, sc.Catchup, sc.MaxCatchupRuns)
	reason := schedule.ReasonMissed
	if sc.Paused {
		// Nothing is created while paused; every due tick says why.
		reason = schedule.ReasonPaused
		skipped, create = append(skipped, create...), nil
	}
	for _, at := range append(skipped, create...) {
		if at.After(p.last) {
			p.last = at
		}
	}
	if summary != nil {
		if summary.Last.After(p.last) {
			p.last = summary.Last
		}
		p.skipped = append(p.skipped, Tick{ScheduleID: sc.ID, Instant: summary.Last, Status: schedule.OutcomeSkipped, Reason: reason,
			SummaryCount: summary.Count, SummaryFirst: summary.First, Epoch: epoch})
		p.note.folded = summary.Count
	}
	for _, at := range skipped {
		p.skipped = append(p.skipped, Tick{ScheduleID: sc.ID, Instant: at, Status: schedule.OutcomeSkipped, Reason: reason, Epoch: epoch})
	}
	p.note.id, p.note.reason, p.note.listed = sc.ID, reason, len(skipped)
	if len(create) == 0 {
		return p, nil
	}
	params, err := s.openParams(ctx, sc)
	if err != nil {
		// Params this server cannot open (no or another vault key): every due tick says
		// why, rather than the pass failing on it every second.
		for _, at := range create {
			p.skipped = append(p.skipped, s.refusal(ctx, sc, at, epoch, err))
		}
		return p, nil
	}
	for _, at := range create {
		p.create = append(p.create, due{sc: sc, params: params, loc: loc, at: at.UTC()})
	}
	return p, nil
}

// refusal is the skipped tick of a run that could not be submitted, with the reason.
func (s *Service) refusal(ctx context.Context, sc *Schedule, at time.Time, epoch int64, cause error) Tick {
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
	return Tick{ScheduleID: sc.ID, Instant: at.UTC(), Status: schedule.OutcomeSkipped, Reason: reason, Epoch: epoch}
}

// recordAll records skipped ticks in batches, counting those that are new. A batch that
// fails for another reason than retryLater is logged and left for the next pass.
func (s *Service) recordAll(ctx context.Context, ticks []Tick) error {
	for len(ticks) > 0 {
		n := min(len(ticks), runs.MaxTickBatch)
		batch := ticks[:n]
		ticks = ticks[n:]
		inserted, err := s.deps.Store.RecordTicks(ctx, batch)
		switch {
		case retryLater(err):
			return err
		case err != nil:
			s.deps.Log.ErrorContext(ctx, "recording skipped schedule ticks failed; they are retried on the next pass",
				"ticks", len(batch), "error", err.Error())
			s.leftOver()
			continue
		}
		for i, t := range batch {
			if !inserted[i] {
				continue
			}
			s.deps.Metrics.ScheduleTick(string(schedule.OutcomeSkipped))
			s.deps.Log.DebugContext(ctx, "schedule tick skipped", "schedule_id", t.ScheduleID,
				"instant", t.Instant.UTC().Format(time.RFC3339), "reason", t.Reason, "summary_count", t.SummaryCount)
		}
	}
	return nil
}
