package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// lockRunPipeline takes the shared pipeline-key lock of the run with id before its row
// is touched (see lockPipelineShared). tenant and name never change, so reading them unlocked is
// safe. A missing run is run.ErrNotFound.
func (s *Store) lockRunPipeline(ctx context.Context, tx bun.Tx, id string) error {
	if !s.d.pipelineLocks {
		return nil
	}
	var key struct {
		Tenant string `bun:"tenant"`
		Name   string `bun:"name"`
	}
	err := tx.NewRaw("SELECT tenant, name FROM sluice_runs WHERE id = ?", id).Scan(ctx, &key)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("run %s: %w", id, run.ErrNotFound)
	}
	if err != nil {
		return err
	}
	return s.lockPipelineShared(ctx, tx, key.Tenant, key.Name)
}

// afterTerminal writes, in the transaction of a terminal transition, what every such
// transition owes: the callback outbox row when build says the run wants one, and the
// promotion of the pipeline key's oldest queued run.
func (s *Store) afterTerminal(ctx context.Context, tx bun.Tx, rec *runs.Record, build runs.CallbackBuilder) error {
	if err := s.terminalWrites(ctx, tx, rec, build); err != nil {
		return err
	}
	return s.promote(ctx, tx, rec.Tenant, rec.Name)
}

// terminalWrites is afterTerminal without the promotion, for a caller that already knows
// whether the key has a queued run.
func (s *Store) terminalWrites(ctx context.Context, tx bun.Tx, rec *runs.Record, build runs.CallbackBuilder) error {
	// A terminal run needs its secrets no more (SPEC §7.2); its stored config keeps tokens.
	// Secrets exist only beside a config with tokens, and a run without is the common case.
	if mayHoldSecrets(rec) {
		if _, err := tx.NewRaw("DELETE FROM sluice_sealed_secrets WHERE run_id = ?", rec.ID).Exec(ctx); err != nil {
			return fmt.Errorf("delete the sealed secrets of run %s: %w", rec.ID, err)
		}
	}
	if build != nil {
		if url, payload, ok := build(callbackInput(rec)); ok {
			if _, err := tx.NewRaw(s.q(`INSERT INTO sluice_outbox (run_id, url, payload, attempts, next_at, created_at)
VALUES (?, ?, ?, 0, {now}, {now})`), rec.ID, url, string(payload)).Exec(ctx); err != nil {
				return fmt.Errorf("write callback outbox row: %w", err)
			}
		}
	}
	// Followers of the run's log on other members end their streams at once. Only a run
	// someone follows is announced: a NOTIFY serializes the commits of every notifying
	// transaction on the server (migration 0027).
	if !rec.Followed {
		return nil
	}
	return s.notifyDone(ctx, tx, rec.ID)
}

// promote moves the oldest queued run of (tenant, name) to pending once fewer runs of
// the key are active than its max_active (1 but for backfills). Several non-serial runs
// of one key may be active at once; the queued run waits until enough of them ended.
//
// Terminal transitions hold only the key's shared lock, so the last two active runs can
// end side by side. Locking the queued row first makes those two take turns exactly
// when it matters: the second, let in once the first commits, sees it ended and
// promotes. With no queued run (the common case) nothing waits.
//
// run.Run.Promote decides on the row read under its lock; the save is conditional on
// the key's active count, read in the same statement.
func (s *Store) promote(ctx context.Context, tx bun.Tx, tenant, name string) error {
	l, err := s.lockRun(ctx, tx, "tenant = ? AND name = ? AND status = 'queued' ORDER BY id LIMIT 1", tenant, name)
	if err != nil {
		return fmt.Errorf("find the queued run to promote: %w", err)
	}
	if l == nil {
		return nil
	}
	if err := l.run.Promote(); err != nil {
		return err
	}
	rec, err := s.saveRun(ctx, tx, l, "", nil, `(SELECT count(*) FROM sluice_runs
       WHERE tenant = ? AND name = ? AND status IN ('pending', 'running', 'sharded')) < max_active`,
		[]any{tenant, name})
	if err != nil {
		return fmt.Errorf("promote queued run: %w", err)
	}
	if rec != nil {
		return s.notifyWork(ctx, tx)
	}
	return nil
}

// mayHoldSecrets reports whether sealed secret rows can exist for rec: they are written
// only for a config holding ${sealed:N} tokens, which a sealed config may hide.
func mayHoldSecrets(rec *runs.Record) bool {
	return rec.ConfigSealed || strings.Contains(rec.Config, "${sealed:")
}

// promoteStranded is the backstop of promotion: it promotes the oldest queued run of
// every pipeline key that has queued runs and none active. promote leaves none such by
// design; this sweep keeps a queue from waiting forever should a path that ends runs
// (now or in future) forget to promote. Finding none is one statement; each key found is promoted in its own
// transaction under the key's exclusive lock.
func (s *Store) promoteStranded(ctx context.Context) (int, error) {
	var keys []struct {
		Tenant string `bun:"tenant"`
		Name   string `bun:"name"`
	}
	err := s.db.NewRaw(`SELECT DISTINCT q.tenant, q.name FROM sluice_runs q WHERE q.status = 'queued'
  AND NOT EXISTS (SELECT 1 FROM sluice_runs a WHERE a.tenant = q.tenant AND a.name = q.name
                  AND a.status IN ('pending', 'running', 'sharded'))
LIMIT ?`, reclaimBatch).Scan(ctx, &keys)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return 0, translate("find stranded queued runs", err)
	}
	for _, k := range keys {
		err := s.runInTx(ctx, func(ctx context.Context, tx bun.Tx) error {
			if err := s.lockPipeline(ctx, tx, k.Tenant, k.Name); err != nil {
				return err
			}
			return s.promote(ctx, tx, k.Tenant, k.Name)
		})
		if err != nil {
			return 0, translate("promote the queued run of "+k.Name, err)
		}
	}
	return len(keys), nil
}

// scanRun runs a statement that returns run rows and reads the single row: nil when it
// matched none, an error when it matched several.
func scanRun(ctx context.Context, db bun.IDB, query string, args ...any) (*runs.Record, error) {
	var rows []runRow
	if err := db.NewRaw(query, args...).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	switch len(rows) {
	case 0:
		return nil, nil
	case 1:
		return rows[0].record()
	}
	return nil, fmt.Errorf("statement changed %d runs where one was expected", len(rows))
}
