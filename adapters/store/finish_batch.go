package store

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

var _ cluster.FinishBatcher = (*Store)(nil)

// FinishBatch ends several owned runs in one transaction; see cluster.FinishBatcher.
//
// Each item is fenced and written as Finish writes it — on PostgreSQL all of them by one
// statement (finishAllInTx), elsewhere one after the other (finishInTx) — so the batch
// costs one BEGIN and one COMMIT for all of them: on PostgreSQL the commit's WAL flush, paid
// once per batch, is the larger part of a trivial run's finish. A failed fence writes
// nothing and aborts nothing (the fenced UPDATE just matches no row), so that item is
// answered run.ErrLeaseLost while the others commit. Any other failure rolls the batch
// back and each item is tried alone, so the answer of every item is its own.
func (s *Store) FinishBatch(ctx context.Context, owner string, batch []cluster.Finishing, build runs.CallbackBuilder) []error {
	errs := make([]error, len(batch))
	todo := make([]preparedFinish, 0, len(batch))
	for i, f := range batch {
		p, err := prepareFinish(f.Ref, f.Outcome)
		if err != nil {
			errs[i] = err
			continue
		}
		p.index = i
		todo = append(todo, p)
	}
	switch len(todo) {
	case 0:
		return errs
	case 1:
		errs[todo[0].index] = s.finishAlone(ctx, owner, todo[0], build)
		return errs
	}
	// One order of pipeline keys (and of queued rows a promotion locks) for every batch,
	// so two batches ending runs of the same keys wait for each other instead of
	// deadlocking.
	slices.SortFunc(todo, func(a, b preparedFinish) int {
		return cmp.Or(cmp.Compare(a.o.Tenant, b.o.Tenant), cmp.Compare(a.o.Name, b.o.Name), cmp.Compare(a.ref.ID, b.ref.ID))
	})
	lost := make([]bool, len(todo))
	err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := s.lockBatchPipelines(ctx, tx, todo, lost); err != nil {
			return err
		}
		if s.d.dataModifyingWith {
			return s.finishAllInTx(ctx, tx, owner, todo, lost, build)
		}
		for j, p := range todo {
			if lost[j] {
				continue
			}
			err := s.finishInTx(ctx, tx, owner, p, build)
			if errors.Is(err, run.ErrLeaseLost) {
				lost[j] = true
				continue
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		for j, p := range todo {
			if lost[j] {
				errs[p.index] = translate("finish run "+p.ref.ID, leaseLost(p.ref))
			}
		}
		return errs
	}
	if err = translate("finish a batch of runs", err); errors.Is(err, run.ErrUnavailable) {
		// The history does not answer: trying each alone would only fail as many times.
		for _, p := range todo {
			errs[p.index] = err
		}
		return errs
	}
	for _, p := range todo {
		errs[p.index] = s.finishAlone(ctx, owner, p, build)
	}
	return errs
}

// lockBatchPipelines takes the shared pipeline-key lock of every item before any run row
// is touched, keeping the lock order of every transaction (keys, then rows; see
// lockPipeline). The keys the callers named go in one statement, which spares a
// statement per run; an item without its key has it read from its row, and one whose
// row is gone is marked lost.
func (s *Store) lockBatchPipelines(ctx context.Context, tx bun.Tx, todo []preparedFinish, lost []bool) error {
	if !s.d.pipelineLocks {
		return nil
	}
	var keys []int64
	for j, p := range todo {
		if p.o.Name != "" {
			keys = append(keys, s.lockKey("pipeline", p.o.Tenant, p.o.Name))
			continue
		}
		err := s.lockOutcomePipeline(ctx, tx, p.ref, p.o)
		if errors.Is(err, run.ErrLeaseLost) {
			lost[j] = true
			continue
		}
		if err != nil {
			return err
		}
	}
	if len(keys) == 0 {
		return nil
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	_, err := tx.ExecContext(ctx, "SELECT pg_advisory_xact_lock_shared(k) FROM unnest(?::bigint[]) AS k", pgdialect.Array(keys))
	return err
}
