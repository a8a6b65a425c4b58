package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"

	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlsink"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// Fence creates the watermark table when missing and takes the key's next epoch in one
// statement (the sink's transactions are immediate, so two processes take turns).
func (s *sink) Fence(ctx context.Context, key string) (execute.Watermark, error) {
	if s.fence.Epoch != 0 {
		return execute.Watermark{}, fmt.Errorf("sqlite: watermark %q: already fenced", key)
	}
	f := sqlsink.Fence{Table: s.opts.watermark.quoted(), Key: key}
	if _, err := s.DB.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+f.Table+` (
	state_key    TEXT PRIMARY KEY,
	epoch        INTEGER NOT NULL,
	bookmark     TEXT,
	rows_after   INTEGER NOT NULL DEFAULT 0,
	completed_by TEXT,
	updated_at   TEXT NOT NULL)`); err != nil {
		return execute.Watermark{}, s.explainFence(fmt.Errorf("create: %w", err))
	}
	w, err := f.Take(ctx, s.DB, "TEXT",
		func(err error) bool { return strings.Contains(err.Error(), "no such column: completed_by") },
		func(err error) bool { return strings.Contains(err.Error(), "duplicate column name") },
		func() (execute.Watermark, error) {
			var (
				epoch            int64
				bookmark, doneBy sql.NullString
				rows             int64
			)
			err := s.DB.QueryRowContext(ctx, `INSERT INTO `+f.Table+` (state_key, epoch, updated_at) VALUES (?, 1, ?)
ON CONFLICT (state_key) DO UPDATE SET epoch = epoch + 1, updated_at = excluded.updated_at
RETURNING epoch, bookmark, rows_after, completed_by`, key, now()).Scan(&epoch, &bookmark, &rows, &doneBy)
			if err != nil {
				return execute.Watermark{}, fmt.Errorf("take the next epoch: %w", err)
			}
			return f.Taken(epoch, bookmark, rows, doneBy)
		})
	if err != nil {
		return execute.Watermark{}, s.explainFence(err)
	}
	s.fence = f
	return w, nil
}

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

func (s *sink) explainFence(err error) error {
	return fmt.Errorf("sqlite: watermark table %q: %w", s.opts.watermark.String(), err)
}

// advance moves the watermark to pos inside the caller's transaction, but only while the
// row still holds this writer's epoch; otherwise the caller rolls back.
func (s *sink) advance(ctx context.Context, q sqlsink.Execer, pos execute.Position) error {
	return s.fence.Advance(ctx, q, "?", []any{now()}, pos)
}

// WriteAt writes p and moves the watermark to pos in the page's transaction (for
// overwrite, the run's transaction, whose watermark moves at CommitAt).
func (s *sink) WriteAt(ctx context.Context, p *execute.Page, pos execute.Position) error {
	if s.fence.Epoch == 0 {
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
	if s.fence.Epoch == 0 {
		return fmt.Errorf("sqlite: table %q: CommitAt before Fence", s.opts.table.String())
	}
	return s.commit(ctx, &pos)
}

var _ execute.FencedSink = (*sink)(nil)
