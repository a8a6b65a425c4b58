package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// The lifecycle's cold paths — hand back, reclaim, promote — do not re-implement the
// rules in SQL: the row is read under its lock (lockRun), rebuilt with run.Rehydrate,
// the domain verb decides, and saveRun writes back what the verb left, conditional on
// the row being as it was read. The hot paths (claim, finish, renew) stay one statement
// each; the store contract's oracle case holds them to the same verbs.

// lockedRun is a run row read under its row lock, the domain's copy of it, and the
// database clock at the read (lease times are the database's, SPEC §4.4).
type lockedRun struct {
	row runRow
	run *run.Run
	now time.Time
}

// lockRow reads the first row of table that where (with args) selects, columns cols and
// the database clock as db_now, under its row lock into a T; nil when none matches.
func lockRow[T any](ctx context.Context, s *Store, tx bun.Tx, table, cols, where string, args ...any) (*T, error) {
	var rows []T
	err := tx.NewRaw(s.q("SELECT {now} AS db_now, "+cols+" FROM "+table+" WHERE "+where+s.d.forUpdate), args...).
		Scan(ctx, &rows)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, nil
	}
	return &rows[0], nil
}

// lockRun reads the one run that where (with args) selects, under its row lock; nil
// when none does. where may end in an ORDER BY … LIMIT 1 to pick one of several.
func (s *Store) lockRun(ctx context.Context, tx bun.Tx, where string, args ...any) (*lockedRun, error) {
	row, err := lockRow[struct {
		runRow
		DBNow int64 `bun:"db_now"`
	}](ctx, s, tx, "sluice_runs", runCols(""), where, args...)
	if err != nil || row == nil {
		return nil, err
	}
	snap, err := row.snapshot()
	if err != nil {
		return nil, err
	}
	return &lockedRun{row: row.runRow, run: run.Rehydrate(snap), now: fromMS(row.DBNow)}, nil
}

// saveRun writes the lifecycle state the verb left in l.run — read through its getters,
// so the domain's copy is the one source of what is stored — plus set (with setArgs) for
// the columns the domain does not hold (counters). It is fenced on the row as lockRun
// read it (same status and lease epoch) and on cond (with condArgs) when given; nil when
// the fence matched no row.
func (s *Store) saveRun(ctx context.Context, tx bun.Tx, l *lockedRun, set string, setArgs []any,
	cond string, condArgs []any) (*runs.Record, error) {
	r := l.run
	atts, err := encodeAttempts(r.Attempts())
	if err != nil {
		return nil, err
	}
	var code, msg any
	if e := r.Error(); e != nil {
		code, msg = string(e.Code), e.Message
	}
	// No cold verb hands a run to an owner: one that releases it also drops the lease.
	release := ""
	if r.Owner() == "" {
		release = "owner_listen = NULL, lease_expires_at = NULL, "
	}
	args := []any{string(r.Status()), r.Attempt(), r.CancelRequested(), nullIfEmpty(r.Owner()),
		msOrNull(r.ClaimedAt()), msOrNull(r.StartedAt()), msOrNull(r.FinishedAt()), code, msg, atts,
		msOrZero(r.NotBefore())}
	args = append(args, setArgs...)
	args = append(args, r.ID(), l.row.Status, l.row.LeaseEpoch)
	where := "id = ? AND status = ? AND lease_epoch = ?"
	if cond != "" {
		where += " AND " + cond
		args = append(args, condArgs...)
	}
	if set != "" {
		set = ", " + set
	}
	return scanRun(ctx, tx, s.q(`UPDATE sluice_runs SET `+release+`status = ?, attempt = ?, cancel_requested = ?,
  owner = ?, claimed_at = ?, started_at = ?, finished_at = ?, error_code = ?, error_message = ?, attempts = ?,
  not_before = ?`+set+`
WHERE `+where+`
RETURNING `+runCols("")), args...)
}
