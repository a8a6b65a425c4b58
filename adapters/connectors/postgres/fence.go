package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/sluicehq/sluice/adapters/connectors/internal/watermark"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
)

// fenceLockTimeout bounds how long Fence waits for the watermark row.
const fenceLockTimeout = "30s"

// fence is a writer's hold on one watermark row: the state key and the epoch it took.
type fence struct {
	table tableName
	key   string
	epoch int64 // 0 until Fence
}

// Fence creates the watermark table when missing and takes the key's next epoch in one
// statement, so two writers starting at once get different epochs and the later one wins.
func (s *sink) Fence(ctx context.Context, key string) (execute.Watermark, error) {
	if s.fence.epoch != 0 {
		return execute.Watermark{}, fmt.Errorf("postgres: watermark %q: already fenced", key)
	}
	f := fence{table: s.opts.watermark, key: key}
	if err := createIfAbsent(ctx, s.conn, f.table, `CREATE TABLE IF NOT EXISTS `+f.table.quoted()+` (
	state_key    text PRIMARY KEY,
	epoch        bigint NOT NULL,
	bookmark     text,
	rows_after   bigint NOT NULL DEFAULT 0,
	completed_by text,
	updated_at   timestamptz NOT NULL DEFAULT now())`); err != nil {
		return execute.Watermark{}, s.explainFence(err)
	}
	w, err := f.take(ctx, s.conn)
	if sqlState(err) == "42703" { // undefined_column: a table of an earlier version
		if err = f.upgrade(ctx, s.conn); err == nil {
			w, err = f.take(ctx, s.conn)
		}
	}
	if err != nil {
		if sqlState(err) == "55P03" {
			return execute.Watermark{}, s.explainFence(pgErr("another writer of "+key+" holds the watermark row (paused mid-commit?): %s", err))
		}
		return execute.Watermark{}, s.explainFence(pgErr("take the next epoch: %s", err))
	}
	f.epoch = w.Epoch
	s.fence = f
	return w, nil
}

// take increments the key's epoch and returns it with the row's position.
func (f *fence) take(ctx context.Context, conn *pgx.Conn) (execute.Watermark, error) {
	var (
		epoch int64
		r     watermark.Row
	)
	tx, err := conn.Begin(ctx)
	if err != nil {
		return execute.Watermark{}, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	// An older writer holds the row only between its last statement and its commit; one
	// paused exactly there must not hang this writer forever.
	if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = '"+fenceLockTimeout+"'"); err != nil {
		return execute.Watermark{}, err
	}
	err = tx.QueryRow(ctx, `INSERT INTO `+f.table.quoted()+` AS w (state_key, epoch) VALUES ($1, 1)
ON CONFLICT (state_key) DO UPDATE SET epoch = w.epoch + 1, updated_at = now()
RETURNING epoch, bookmark, rows_after, completed_by`, f.key).Scan(&epoch, &r.Bookmark, &r.Rows, &r.CompletedBy)
	if err == nil {
		err = tx.Commit(ctx)
	}
	if err != nil {
		return execute.Watermark{}, err
	}
	pos, err := watermark.Decode(r)
	if err != nil {
		return execute.Watermark{}, err
	}
	return execute.Watermark{Epoch: epoch, Position: pos}, nil
}

// upgrade adds the completed_by column to a watermark table created by an earlier
// version (NULL in every row: no run is recorded as having completed it). IF NOT EXISTS
// lets two writers upgrading at once both succeed; the lock timeout keeps a writer
// paused mid-transaction, whose row lock the ALTER must wait for, from hanging this one.
func (f *fence) upgrade(ctx context.Context, conn *pgx.Conn) error {
	_, err := conn.Exec(ctx, "BEGIN; SET LOCAL lock_timeout = '"+fenceLockTimeout+"'; ALTER TABLE "+f.table.quoted()+
		" ADD COLUMN IF NOT EXISTS "+watermark.CompletedBy+" text; COMMIT")
	if err != nil {
		return pgErr("add the "+watermark.CompletedBy+" column to a watermark table of an earlier version: %s", err)
	}
	return nil
}

func (s *sink) explainFence(err error) error {
	return fmt.Errorf("postgres: watermark table %q: %w", s.opts.watermark.String(), s.sc.Wrap(err))
}

// advance moves the watermark to pos inside the caller's transaction, but only while the
// row still holds this writer's epoch. It is the transaction's last statement, so the
// row is locked only for the moment before the commit and a newer writer's Fence never
// waits for a paused older one.
func (f *fence) advance(ctx context.Context, conn *pgx.Conn, pos execute.Position) error {
	if f.epoch == 0 {
		return errors.New("the watermark was never fenced")
	}
	r, err := watermark.Encode(pos)
	if err != nil {
		return err
	}
	tag, err := conn.Exec(ctx, `UPDATE `+f.table.quoted()+` SET bookmark = $3, rows_after = $4, completed_by = $5, updated_at = now()
WHERE state_key = $1 AND epoch = $2`, f.key, f.epoch, r.Bookmark, r.Rows, r.CompletedBy)
	if err != nil {
		return pgErr("watermark: %s", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("watermark %q: epoch %d was taken by a newer writer; this writer stops and its page is rolled back: %w",
			f.key, f.epoch, run.ErrLeaseLost)
	}
	return nil
}

// WriteAt writes p and moves the watermark to pos in the same transaction (for
// overwrite, the run's transaction, whose watermark moves at CommitAt).
func (s *sink) WriteAt(ctx context.Context, p *execute.Page, pos execute.Position) error {
	if s.fence.epoch == 0 {
		return fmt.Errorf("postgres: table %q: WriteAt before Fence", s.opts.table.String())
	}
	if s.opts.mode == pipeline.Overwrite {
		return s.writePage(ctx, p, nil)
	}
	return s.writePage(ctx, p, &pos)
}

// CommitAt records pos, fenced, and ends the sink.
func (s *sink) CommitAt(ctx context.Context, pos execute.Position) error {
	if s.fence.epoch == 0 {
		return fmt.Errorf("postgres: table %q: CommitAt before Fence", s.opts.table.String())
	}
	return s.commit(ctx, &pos)
}
