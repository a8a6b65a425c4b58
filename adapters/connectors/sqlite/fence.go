package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/sluicehq/sluice/adapters/connectors/internal/watermark"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/run"
)

// fence is a writer's hold on one watermark row: the state key and the epoch it took.
type fence struct {
	table tableName
	key   string
	epoch int64 // 0 until Fence
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Fence creates the watermark table when missing and takes the key's next epoch in one
// statement (the sink's transactions are immediate, so two processes take turns).
func (s *sink) Fence(ctx context.Context, key string) (execute.Watermark, error) {
	if s.fence.epoch != 0 {
		return execute.Watermark{}, fmt.Errorf("sqlite: watermark %q: already fenced", key)
	}
	f := fence{table: s.opts.watermark, key: key}
	if _, err := s.db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+f.table.quoted()+` (
	state_key  TEXT PRIMARY KEY,
	epoch      INTEGER NOT NULL,
	bookmark   TEXT,
	rows_after INTEGER NOT NULL DEFAULT 0,
	updated_at TEXT NOT NULL)`); err != nil {
		return execute.Watermark{}, s.explainFence(fmt.Errorf("create: %w", err))
	}
	var (
		epoch    int64
		bookmark sql.NullString
		rows     int64
	)
	err := s.db.QueryRowContext(ctx, `INSERT INTO `+f.table.quoted()+` (state_key, epoch, updated_at) VALUES (?, 1, ?)
ON CONFLICT (state_key) DO UPDATE SET epoch = epoch + 1, updated_at = excluded.updated_at
RETURNING epoch, bookmark, rows_after`, key, now()).Scan(&epoch, &bookmark, &rows)
	if err != nil {
		return execute.Watermark{}, s.explainFence(fmt.Errorf("take the next epoch: %w", err))
	}
	var b *string
	if bookmark.Valid {
		b = &bookmark.String
	}
	pos, err := watermark.Decode(b, rows)
	if err != nil {
		return execute.Watermark{}, s.explainFence(err)
	}
	f.epoch = epoch
	s.fence = f
	return execute.Watermark{Epoch: epoch, Position: pos}, nil
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

func (s *sink) explainFence(err error) error {
	return fmt.Errorf("sqlite: watermark table %q: %w", s.opts.watermark.String(), err)
}

// advance moves the watermark to pos inside the caller's transaction, but only while the
// row still holds this writer's epoch; otherwise the caller rolls back.
func (f *fence) advance(ctx context.Context, q execer, pos execute.Position) error {
	if f.epoch == 0 {
		return errors.New("the watermark was never fenced")
	}
	bookmark, rows, err := watermark.Encode(pos)
	if err != nil {
		return err
	}
	res, err := q.ExecContext(ctx, `UPDATE `+f.table.quoted()+` SET bookmark = ?, rows_after = ?, updated_at = ?
WHERE state_key = ? AND epoch = ?`, bookmark, rows, now(), f.key, f.epoch)
	if err != nil {
		return fmt.Errorf("watermark: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return fmt.Errorf("watermark %q: epoch %d was taken by a newer writer; this writer stops and its page is rolled back: %w",
			f.key, f.epoch, run.ErrLeaseLost)
	}
	return nil
}

// WriteAt writes p and moves the watermark to pos in the page's transaction (for
// overwrite, the run's transaction, whose watermark moves at CommitAt).
func (s *sink) WriteAt(ctx context.Context, p *execute.Page, pos execute.Position) error {
	if s.fence.epoch == 0 {
		return fmt.Errorf("sqlite: table %q: WriteAt before Fence", s.opts.table.String())
	}
	if s.opts.mode != pipeline.Overwrite {
		s.pos = &pos
		defer func() { s.pos = nil }()
	}
	return s.Write(ctx, p)
}

// CommitAt records pos, fenced, and ends the sink.
func (s *sink) CommitAt(ctx context.Context, pos execute.Position) error {
	if s.fence.epoch == 0 {
		return fmt.Errorf("sqlite: table %q: CommitAt before Fence", s.opts.table.String())
	}
	return s.commit(ctx, &pos)
}

var _ execute.FencedSink = (*sink)(nil)
