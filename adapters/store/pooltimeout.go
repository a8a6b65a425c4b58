package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/member"
	"github.com/sluicehq/sluice/domain/pool"
	"github.com/sluicehq/sluice/domain/run"
)

// poolTimeoutBatch bounds the runs of one pool that one FailUnservedPools call fails; the
// lease loop calls again on its next tick.
const poolTimeoutBatch = 500

// FailUnservedPools fails the pending runs of pools that no live, non-draining member
// has served for wait (cluster.PoolTimeouts, SPEC §5.5), and so the sharded runs whose
// shards wait there: shards inherit their run's pool (§5.3), so they starve with it. A pool is unserved since the
// latest lease expiry among the members that advertised it — heartbeat + ttl, or the
// clean stop — and a run waits from that instant or its creation, whichever is later
// (pool.UnservedSince). Every time is read from the database clock except created_at,
// which the submitting member stamped.
//
// Each run is failed in its own transaction by a write conditional on it still being
// pending in that pool, with its callback outbox row and the promotion of a queued
// sibling, so members doing this at once fail each run once, and a run claimed or
// cancelled meanwhile is left alone.
func (s *Store) FailUnservedPools(ctx context.Context, ttl, wait time.Duration, build runs.CallbackBuilder) ([]cluster.PoolTimedOut, error) {
	if wait <= 0 || ttl <= 0 {
		return nil, nil
	}
	rows, err := s.memberRows(ctx, s.db)
	if err != nil {
		return nil, translate("read the membership", err)
	}
	now, err := s.Now(ctx)
	if err != nil {
		return nil, err
	}
	served, lastExpiry, err := poolExpiries(rows, now, ttl)
	if err != nil {
		return nil, err
	}
	waiting, err := s.poolsWithPendingWork(ctx)
	if err != nil {
		return nil, err
	}
	var out []cluster.PoolTimedOut
	for _, p := range waiting {
		if pool.Observe(slices.Contains(served, p), lastExpiry[p], now, wait) != pool.PhaseTimedOut {
			continue
		}
		failed, err := s.failPool(ctx, p, lastExpiry[p], now, wait, build)
		out = append(out, failed...)
		if err != nil {
			return out, err
		}
		failed, err = s.failPoolShards(ctx, p, lastExpiry[p], now, wait, build)
		out = append(out, failed...)
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// poolsWithPendingWork lists, sorted, the pools that have pending runs or pending shards.
func (s *Store) poolsWithPendingWork(ctx context.Context) ([]string, error) {
	var pools []string
	err := s.db.NewRaw(`SELECT pool FROM sluice_runs WHERE status = 'pending'
UNION SELECT pool FROM sluice_shards WHERE status = 'pending' ORDER BY pool`).Scan(ctx, &pools)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, translate("find pools with pending work", err)
	}
	return pools, nil
}

func unservedMessage(p string, wait time.Duration) string {
	return fmt.Sprintf("pool %q has had no live member for %s (--pool-wait-timeout-secs): start a member with --pool %s",
		p, wait, p)
}

// poolExpiries returns the pools live, non-draining members serve, and for every pool
// any member advertised the latest instant its lease ran (or runs) out. A member without
// pool support advertised the default pool.
func poolExpiries(rows []memberRow, now time.Time, ttl time.Duration) ([]string, map[string]time.Time, error) {
	var running []member.Member
	last := map[string]time.Time{}
	for _, r := range rows {
		m, err := r.member()
		if err != nil {
			return nil, nil, err
		}
		expiry := m.HeartbeatAt.Add(ttl)
		if r.StoppedAt != nil {
			expiry = fromMS(*r.StoppedAt)
		} else {
			running = append(running, m)
		}
		advertised := m.Pools
		if advertised == nil {
			advertised = []string{pool.Default}
		}
		for _, p := range advertised {
			if expiry.After(last[p]) {
				last[p] = expiry
			}
		}
	}
	return member.ServedPools(running, now, ttl), last, nil
}

// failPool fails the pending runs of one unserved pool whose wait is over.
func (s *Store) failPool(ctx context.Context, p string, lastExpiry, now time.Time, wait time.Duration,
	build runs.CallbackBuilder) ([]cluster.PoolTimedOut, error) {
	var cands []struct {
		ID        string `bun:"id"`
		CreatedAt int64  `bun:"created_at"`
	}
	err := s.db.NewRaw(`SELECT id, created_at FROM sluice_runs WHERE status = 'pending' AND pool = ? AND created_at <= ?
ORDER BY id LIMIT ?`, p, now.Add(-wait).UnixMilli(), poolTimeoutBatch).Scan(ctx, &cands)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, translate("find runs of unserved pool "+p, err)
	}
	msg := unservedMessage(p, wait)
	var out []cluster.PoolTimedOut
	for _, c := range cands {
		if !pool.TimedOut(pool.UnservedSince(lastExpiry, fromMS(c.CreatedAt)), now, wait) {
			continue
		}
		name, ok, err := s.failPending(ctx, c.ID, p, msg, build)
		if err != nil {
			return out, translate("fail run "+c.ID+" of unserved pool "+p, err)
		}
		if ok {
			out = append(out, cluster.PoolTimedOut{ID: c.ID, Name: name, Pool: p})
		}
	}
	return out, nil
}

// failPending ends one pending run of pool p as failed (pool_unavailable) and answers its
// name; false when it is no longer pending there.
func (s *Store) failPending(ctx context.Context, id, p, msg string, build runs.CallbackBuilder) (string, bool, error) {
	done, name := false, ""
	err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		if err := s.lockRunPipeline(ctx, tx, id); err != nil {
			if errors.Is(err, run.ErrNotFound) {
				return nil // deleted meanwhile
			}
			return err
		}
		rec, err := scanRun(ctx, tx, s.q(`UPDATE sluice_runs SET status = 'failed', error_code = ?, error_message = ?,
  finished_at = {now}
WHERE id = ? AND status = 'pending' AND pool = ?
RETURNING `+runCols("")), string(run.CodePoolUnavailable), msg, id, p)
		if err != nil || rec == nil {
			return err
		}
		done, name = true, rec.Name
		return s.afterTerminal(ctx, tx, rec, build)
	})
	return name, done && err == nil, err
}

// failPoolShards ends the sharded runs of one unserved pool whose shards have waited
// there past the wait — a shard waits from its run's planning or the pool's last lease
// expiry, whichever is later. In one transaction per run, with the locks every shard end
// takes, its pending shards are cancelled (pending → failed is no shard transition: SPEC
// §3) with pool_unavailable and the reason, and the run ends failed with that code and
// reason once no shard of it runs (settleParent), with its callback row.
func (s *Store) failPoolShards(ctx context.Context, p string, lastExpiry, now time.Time, wait time.Duration,
	build runs.CallbackBuilder) ([]cluster.PoolTimedOut, error) {
	var cands []struct {
		RunID     string `bun:"run_id"`
		CreatedAt int64  `bun:"created_at"`
	}
	err := s.db.NewRaw(`SELECT run_id, MIN(created_at) AS created_at FROM sluice_shards
WHERE status = 'pending' AND pool = ? AND created_at <= ?
GROUP BY run_id ORDER BY run_id LIMIT ?`, p, now.Add(-wait).UnixMilli(), poolTimeoutBatch).Scan(ctx, &cands)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, translate("find shards of unserved pool "+p, err)
	}
	msg := unservedMessage(p, wait)
	var out []cluster.PoolTimedOut
	for _, c := range cands {
		if !pool.TimedOut(pool.UnservedSince(lastExpiry, fromMS(c.CreatedAt)), now, wait) {
			continue
		}
		status, err := s.failPendingShards(ctx, c.RunID, p, msg, build)
		if err != nil {
			return out, translate("fail the shards of run "+c.RunID+" in unserved pool "+p, err)
		}
		if status == string(run.Failed) {
			out = append(out, cluster.PoolTimedOut{ID: c.RunID, Pool: p})
		}
	}
	ids := make([]string, len(out))
	for i, r := range out {
		ids[i] = r.ID
	}
	names, err := s.runNames(ctx, ids)
	if err != nil {
		return out, translate("read the names of the sharded runs of unserved pool "+p, err)
	}
	for i := range out {
		out[i].Name = names[out[i].ID] // counted under their pipeline
	}
	return out, nil
}

// failPendingShards cancels the pending shards of run runID in pool p and ends the run
// when none of its shards runs; it answers the status the run ended with, or "".
func (s *Store) failPendingShards(ctx context.Context, runID, p, msg string, build runs.CallbackBuilder) (string, error) {
	var status string
	err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
		status = ""
		cancelled, err := s.lockParent(ctx, tx, runID)
		if errors.Is(err, run.ErrNotFound) {
			return nil // deleted meanwhile
		}
		if err != nil {
			return err
		}
		res, err := tx.NewRaw(s.q(`UPDATE sluice_shards SET status = 'cancelled', error_code = ?, error_message = ?,
  finished_at = {now}
WHERE run_id = ? AND status = 'pending' AND pool = ?`), string(run.CodePoolUnavailable), msg, runID, p).Exec(ctx)
		if err != nil {
			return err
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return nil // claimed or cancelled meanwhile
		}
		status, err = s.settleParent(ctx, tx, runID, cancelled, build)
		return err
	})
	return status, err
}
