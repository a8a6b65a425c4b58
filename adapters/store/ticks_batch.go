package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/application/scheduling"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/schedule"
)

// activeStatuses are the statuses that make a schedule busy: overlap is judged per
// schedule, so a sibling schedule of the same template never makes a tick skip.
const activeStatuses = "('queued', 'pending', 'running', 'sharded')"

// tickKey names a tick: (schedule, instant in ms).
type tickKey struct {
	schedule string
	instant  int64
}

// busyKey names the runs overlap is judged on: one schedule's runs of one pipeline key.
type busyKey struct{ tenant, name, schedule string }

// runKey names a run by its unique (tenant, name, run_key).
type runKey struct{ tenant, name, key string }

// CreateTick stores the run of a schedule tick with its tick row; see runs.Store. It is
// a batch of one, so one tick and a batch decide alike.
func (s *Store) CreateTick(ctx context.Context, rec *runs.Record, tick runs.Tick) (runs.CreateResult, error) {
	res, err := s.CreateTicks(ctx, []runs.TickCreate{{Rec: rec, Tick: tick}})
	if err != nil {
		return runs.CreateResult{}, err
	}
	return res[0], nil
}

// CreateTicks stores a batch of ticks in one transaction; see runs.Store. The reads a
// tick's decision needs (its existing tick, its run key, its schedule's active runs) are
// one statement each for the whole batch, and the rows are written with multi-row
// INSERTs; the decisions themselves are taken in batch order in memory, each seeing
// what the earlier ticks of the batch stored.
func (s *Store) CreateTicks(ctx context.Context, batch []runs.TickCreate) ([]runs.CreateResult, error) {
	if len(batch) == 0 {
		return nil, nil
	}
	if len(batch) > runs.MaxTickBatch {
		return nil, fmt.Errorf("create %d ticks: a batch holds at most %d", len(batch), runs.MaxTickBatch)
	}
	statuses := make([]string, len(batch))
	epoch := batch[0].Tick.Epoch
	for i, tc := range batch {
		st, err := createStatus(tc.Rec)
		if err != nil {
			return nil, err
		}
		if tc.Tick.Epoch != epoch {
			return nil, fmt.Errorf("create ticks: one batch is of one term, not %d and %d", epoch, tc.Tick.Epoch)
		}
		statuses[i] = st
	}
	var out []runs.CreateResult
	err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		out = make([]runs.CreateResult, len(batch)) // afresh when the transaction is retried
		// The queue's lock (as Create takes it, before any key's), the keys' locks (as
		// every admission decision), then the term row.
		var queue tickState
		if err := s.readQueue(ctx, tx, batch, &queue); err != nil {
			return err
		}
		if err := s.lockPipelines(ctx, tx, batch); err != nil {
			return err
		}
		if err := s.checkTerm(ctx, tx, epoch); err != nil {
			return err
		}
		st, err := s.readTickState(ctx, tx, batch)
		if err != nil {
			return err
		}
		st.queued, st.inFlight = queue.queued, queue.inFlight
		w := &tickWriter{s: s}
		for i, tc := range batch {
			if out[i], err = s.decideTick(ctx, tx, st, w, tc, statuses[i]); err != nil {
				return err
			}
		}
		return w.flush(ctx, tx)
	})
	if err != nil {
		first := batch[0].Tick
		return nil, translate(fmt.Sprintf("create %d ticks (the first %s of schedule %s)", len(batch),
			first.Instant.UTC().Format("2006-01-02T15:04:05Z"), first.ScheduleID), err)
	}
	for i, r := range out {
		if r.Created {
			batch[i].Rec.Status = r.Status
		}
	}
	return out, nil
}

// decideTick is one tick of a batch, decided as CreateTick alone would decide it.
func (s *Store) decideTick(ctx context.Context, tx bun.Tx, st *tickState, w *tickWriter, tc runs.TickCreate, status string) (runs.CreateResult, error) {
	rec, tick := tc.Rec, tc.Tick
	instant := tick.Instant.UTC()
	tk := tickKey{tick.ScheduleID, instant.UnixMilli()}
	if prior, ok := st.ticks[tk]; ok {
		return prior, nil
	}
	bk := busyKey{rec.Tenant, rec.Name, tick.ScheduleID}
	outcome, reason := tick.Overlap.Decide(st.busy[bk])
	if outcome == schedule.OutcomeSkipped {
		st.ticks[tk] = runs.CreateResult{}
		w.tick(scheduling.Tick{ScheduleID: tick.ScheduleID, Instant: instant, Status: outcome, Reason: reason, Epoch: tick.Epoch})
		return runs.CreateResult{Skipped: reason}, nil
	}
	if outcome == schedule.OutcomeQueued {
		status = string(run.Queued)
	}
	rk := runKey{rec.Tenant, rec.Name, rec.RunKey}
	other, replay := st.runs[rk]
	replay = replay && rec.RunKey != ""
	if !replay && rec.QueueLimit > 0 && st.queued >= rec.QueueLimit {
		// As Create decides with its insert: the count includes the batch's earlier runs.
		return runs.CreateResult{Refused: runs.QueueFull(st.queued-st.inFlight, st.inFlight, rec.QueueLimit)}, nil
	}
	var res runs.CreateResult
	if replay {
		// The run key, unique per (schedule, instant), names a run already — one created
		// before the schedule's tick rows were kept with their runs: the tick points at it.
		res = other
	} else if rec.Serial || len(rec.Secrets) > 0 {
		// A serial decision reads the key's runs, which must include the batch's so far;
		// sealed secrets are rows of their own. Both are rare enough to go one by one.
		if err := w.flush(ctx, tx); err != nil {
			return runs.CreateResult{}, err
		}
		var err error
		res, err = s.createInTx(ctx, tx, rec, nil, status)
		if err != nil && !errors.Is(err, errReplay) {
			return runs.CreateResult{}, err
		}
	} else {
		if err := w.run(rec, status); err != nil {
			return runs.CreateResult{}, err
		}
		res = runs.CreateResult{Created: true, RunID: rec.ID, Status: status}
	}
	outcome = schedule.OutcomeCreated
	if res.Status == string(run.Queued) {
		outcome = schedule.OutcomeQueued
	}
	if res.Created && rec.QueueLimit > 0 {
		st.queued++ // a run admitted at once is in inFlight already
	}
	if res.Created {
		st.busy[bk] = true
		st.runs[rk] = runs.CreateResult{RunID: res.RunID, Status: res.Status}
	}
	st.ticks[tk] = runs.CreateResult{RunID: res.RunID, Status: res.Status}
	w.tick(scheduling.Tick{ScheduleID: tick.ScheduleID, Instant: instant, Status: outcome, RunID: res.RunID, Epoch: tick.Epoch})
	return res, nil
}

// lockPipelines takes the exclusive locks of the batch's pipeline keys in ascending key
// order, so two batches sharing keys wait for each other instead of deadlocking.
func (s *Store) lockPipelines(ctx context.Context, tx bun.Tx, batch []runs.TickCreate) error {
	if !s.d.pipelineLocks {
		return nil
	}
	set := make(map[int64]bool, len(batch))
	for _, tc := range batch {
		set[s.lockKey("pipeline", tc.Rec.Tenant, tc.Rec.Name)] = true
	}
	keys := slices.Sorted(maps.Keys(set))
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "(%d)", k)
	}
	// The sorted subquery feeds the aggregate in order, so the locks are taken in it.
	_, err := tx.ExecContext(ctx, "SELECT count(pg_advisory_xact_lock(k)) FROM (SELECT column1 AS k FROM (VALUES "+
		b.String()+") AS v ORDER BY column1) AS sorted")
	return err
}

// tickState is what a batch's decisions read, updated as each tick is decided.
type tickState struct {
	ticks map[tickKey]runs.CreateResult // recorded ticks, as their replay answers
	runs  map[runKey]runs.CreateResult  // runs by run key
	busy  map[busyKey]bool              // schedules with queued or active runs
	// queued is the pending and queued runs plus inFlight (runs admitted at once, maybe
	// not stored yet) when a record of the batch has a QueueLimit (see readQueue).
	queued, inFlight int
}

// readQueue counts the queue as admitQueued does, once for the batch, when a record of it
// leaves admission to the store (Record.QueueLimit).
func (s *Store) readQueue(ctx context.Context, tx bun.Tx, batch []runs.TickCreate, st *tickState) error {
	var limited *runs.Record
	for _, tc := range batch {
		if tc.Rec.QueueLimit > 0 {
			limited = tc.Rec
			break
		}
	}
	if limited == nil {
		return nil
	}
	n, inFlight, err := s.countQueue(ctx, tx, limited.QueueInFlight)
	if err != nil {
		return err
	}
	st.inFlight = inFlight
	st.queued = n + st.inFlight
	return nil
}

// readTickState reads the batch's recorded ticks, the runs its run keys name and which of
// its schedules are busy, one statement each.
func (s *Store) readTickState(ctx context.Context, tx bun.Tx, batch []runs.TickCreate) (*tickState, error) {
	st := &tickState{ticks: map[tickKey]runs.CreateResult{}, runs: map[runKey]runs.CreateResult{}, busy: map[busyKey]bool{}}
	keys := make([]tickKey, len(batch))
	for i, tc := range batch {
		keys[i] = tickKey{tc.Tick.ScheduleID, tc.Tick.Instant.UTC().UnixMilli()}
	}
	var err error
	if st.ticks, err = s.readTicks(ctx, tx, keys); err != nil {
		return nil, err
	}
	if err := s.readRunKeys(ctx, tx, batch, st); err != nil {
		return nil, err
	}
	return st, s.readBusy(ctx, tx, batch, st)
}

// values writes n rows of width placeholders as a VALUES list.
func values(n, width int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?, ", width), ", ") + ")"
	return strings.TrimSuffix(strings.Repeat(row+", ", n), ", ")
}

// readTicks answers which of keys are recorded ticks, with their replay answers (the
// run and its status; none for a skipped tick).
func (s *Store) readTicks(ctx context.Context, tx bun.Tx, keys []tickKey) (map[tickKey]runs.CreateResult, error) {
	args := make([]any, 0, 2*len(keys))
	for _, k := range keys {
		args = append(args, k.schedule, k.instant)
	}
	var rows []struct {
		ScheduleID string         `bun:"schedule_id"`
		Instant    int64          `bun:"instant"`
		RunID      sql.NullString `bun:"run_id"`
		Status     sql.NullString `bun:"run_status"`
	}
	err := tx.NewRaw(`SELECT t.schedule_id, t.instant, t.run_id, r.status AS run_status
FROM sluice_schedule_ticks t LEFT JOIN sluice_runs r ON r.id = t.run_id
WHERE (t.schedule_id, t.instant) IN (VALUES `+values(len(keys), 2)+`)`, args...).Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	out := make(map[tickKey]runs.CreateResult, len(rows))
	for _, r := range rows {
		out[tickKey{r.ScheduleID, r.Instant}] = runs.CreateResult{RunID: r.RunID.String, Status: r.Status.String}
	}
	return out, nil
}
