package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// reclaimBatch bounds one Reclaim call; the lease loop calls again on its next tick.
const reclaimBatch = 500

// Reclaim ends the expired leases of any owner (by the database clock) with the rules
// of run.Requeue: cancel requested → cancelled; attempts left → pending; else failed
// (poisoned). Terminal ones get their callback row and promote a queued sibling.
//
// Each run is reclaimed in its own transaction that re-checks the expiry under a row
// lock, so a member renewing at the same instant either wins or loses cleanly, and lock
// order (pipeline key, then row) is the same as Finish's.
//
// It also promotes queued runs stranded with no active sibling (promoteStranded), the
// backstop of the promotion a terminal transition makes.
func (s *Store) Reclaim(ctx context.Context, build runs.CallbackBuilder) ([]cluster.Reclaimed, error) {
	out, err := s.reclaim(ctx, "lease_expires_at <= {now}", nil, build)
	if err != nil {
		return out, err
	}
	n, err := s.promoteStranded(ctx)
	if err != nil {
		return out, err
	}
	if n > 0 {
		s.log.Info("promoted queued runs that no terminal transition promoted", "pipelines", n)
	}
	return out, nil
}

// ReclaimOrphans is Reclaim for running runs owned by anyone but self, expired or not.
// Only the holder of the exclusive history lock may call it: then no other member can
// be executing them.
func (s *Store) ReclaimOrphans(ctx context.Context, self string, build runs.CallbackBuilder) ([]cluster.Reclaimed, error) {
	return s.reclaim(ctx, "(owner IS NULL OR owner <> ?)", []any{self}, build)
}

func (s *Store) reclaim(ctx context.Context, cond string, condArgs []any, build runs.CallbackBuilder) ([]cluster.Reclaimed, error) {
	refs, err := runLeases().running(ctx, s, cond, condArgs)
	if err != nil {
		return nil, translate("find expired leases", err)
	}
	var out []cluster.Reclaimed
	for _, ref := range refs {
		id := ref.ID
		r, ok, err := s.reclaimOne(ctx, id, cond, condArgs, build)
		if err != nil {
			return out, translate("reclaim run "+id, err)
		}
		if ok {
			out = append(out, r)
		}
	}
	return out, nil
}

func (s *Store) reclaimOne(ctx context.Context, id, cond string, condArgs []any, build runs.CallbackBuilder) (cluster.Reclaimed, bool, error) {
	var res cluster.Reclaimed
	found := false
	err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := s.lockRunPipeline(ctx, tx, id); err != nil {
			if errors.Is(err, run.ErrNotFound) {
				return nil // deleted meanwhile
			}
			return err
		}
		where, args := runLeases().stillRunning(cluster.Ref{ID: id}, cond, condArgs)
		l, err := s.lockRun(ctx, tx, where, args...)
		if err != nil || l == nil {
			return err // nil: renewed, finished or reclaimed by a peer meanwhile
		}
		if err := l.run.Requeue(l.now); err != nil {
			return err
		}
		rec, err := s.saveRun(ctx, tx, l, "", nil, "", nil)
		if err != nil {
			return err
		}
		if rec == nil {
			return fmt.Errorf("run %s changed under its row lock", id)
		}
		after := run.Status(rec.Status)
		found = true
		res = cluster.Reclaimed{ID: id, Name: rec.Name, Outcome: reclaimOutcome(after)}
		if after.Terminal() {
			return s.afterTerminal(ctx, tx, rec, build)
		}
		return s.notifyWork(ctx, tx)
	})
	return res, found, err
}

func reclaimOutcome(st run.Status) string {
	switch st {
	case run.Pending:
		return "requeued"
	case run.Cancelled:
		return "cancelled"
	}
	return "failed"
}

// snapshot rebuilds the domain state of a row, so the domain's rules decide what a
// reclaim does.
func (r *runRow) snapshot() (run.Snapshot, error) {
	rec, err := r.record()
	if err != nil {
		return run.Snapshot{}, err
	}
	return rec.Snapshot(), nil
}

func encodeAttempts(atts []run.Attempt) (string, error) {
	out := make([]attemptJSON, len(atts))
	for i, a := range atts {
		out[i] = attemptJSON{N: a.N, InstanceID: a.InstanceID, ClaimedAt: a.ClaimedAt.UnixMilli(), Outcome: string(a.Outcome)}
		if !a.EndedAt.IsZero() {
			ms := a.EndedAt.UnixMilli()
			out[i].EndedAt = &ms
		}
		if a.Error != nil {
			code, msg := string(a.Error.Code), a.Error.Message
			out[i].ErrorCode, out[i].ErrorMessage = &code, &msg
		}
	}
	b, err := json.Marshal(out)
	return string(b), err
}
