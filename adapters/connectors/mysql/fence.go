package mysql

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/sluicehq/sluice/adapters/connectors/internal/sqlsink"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// Fence creates the watermark table when missing and takes the key's next epoch. MariaDB
// has no UPDATE … RETURNING, so the increment and the read share one transaction, in
// which the row stays locked between them.
func (s *sink) Fence(ctx context.Context, key string) (execute.Watermark, error) {
	if s.fence.Epoch != 0 {
		return execute.Watermark{}, fmt.Errorf("mysql: watermark %q: already fenced", key)
	}
	if err := s.checkTransactional(ctx); err != nil {
		return execute.Watermark{}, s.explain(err)
	}
	f := sqlsink.Fence{Table: s.opts.watermark.quoted(), Key: key}
	if _, err := s.DB.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS `+f.Table+` (
	state_key    VARCHAR(255) NOT NULL PRIMARY KEY,
	epoch        BIGINT NOT NULL,
	bookmark     TEXT NULL,
	rows_after   BIGINT NOT NULL DEFAULT 0,
	completed_by VARCHAR(255) NULL,
	updated_at   DATETIME(6) NOT NULL DEFAULT CURRENT_TIMESTAMP(6)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4`); err != nil {
		return execute.Watermark{}, s.explainFence(fmt.Errorf("create: %w", err))
	}
	w, err := f.Take(ctx, s.DB, "VARCHAR(255) NULL",
		func(err error) bool { return errNumber(err) == 1054 }, // ER_BAD_FIELD_ERROR
		func(err error) bool { return errNumber(err) == 1060 }, // ER_DUP_FIELDNAME
		func() (execute.Watermark, error) { return s.takeEpoch(ctx, &f) })
	if err != nil {
		return execute.Watermark{}, s.explainFence(err)
	}
	s.fence = f
	return w, nil
}

// takeEpoch increments the key's epoch and reads the row back in one transaction.
func (s *sink) takeEpoch(ctx context.Context, f *sqlsink.Fence) (execute.Watermark, error) {
	tx, err := s.DB.BeginTx(ctx, nil)
	if err != nil {
		return execute.Watermark{}, err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO `+f.Table+` (state_key, epoch) VALUES (?, 1)
ON DUPLICATE KEY UPDATE epoch = epoch + 1, updated_at = CURRENT_TIMESTAMP(6)`, f.Key); err != nil {
		return execute.Watermark{}, fmt.Errorf("take the next epoch: %w", err)
	}
	var (
		epoch            int64
		bookmark, doneBy sql.NullString
		rows             int64
	)
	if err := tx.QueryRowContext(ctx, `SELECT epoch, bookmark, rows_after, completed_by FROM `+f.Table+` WHERE state_key = ?`, f.Key).
		Scan(&epoch, &bookmark, &rows, &doneBy); err != nil {
		return execute.Watermark{}, fmt.Errorf("read the watermark: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return execute.Watermark{}, fmt.Errorf("commit: %w", err)
	}
	return f.Taken(epoch, bookmark, rows, doneBy)
}

// checkTransactional refuses a table whose engine ignores transactions (MyISAM): its rows
// would stay after a rollback, so exactly-once could not hold.
func (s *sink) checkTransactional(ctx context.Context) error {
	if s.table == nil {
		return nil // created as InnoDB
	}
	schema := any(nil)
	if s.opts.table.schema != "" {
		schema = s.opts.table.schema
	}
	var engine sql.NullString
	err := s.DB.QueryRowContext(ctx, `SELECT ENGINE FROM information_schema.TABLES
WHERE TABLE_SCHEMA = COALESCE(?, DATABASE()) AND TABLE_NAME = ?`, schema, s.opts.table.name).Scan(&engine)
	if err != nil {
		return fmt.Errorf("read the table's engine: %w", err)
	}
	if e := strings.ToUpper(engine.String); e != "INNODB" && e != "" {
		return fmt.Errorf("delivery exactly_once needs a transactional table, but the engine is %s; use ENGINE=InnoDB or delivery: at_least_once", engine.String)
	}
	return nil
}

func (s *sink) explainFence(err error) error {
	return fmt.Errorf("mysql: watermark table %q: %w", s.opts.watermark.String(), s.sc.Wrap(err))
}

// advance moves the watermark to pos inside the caller's transaction, but only while the
// row still holds this writer's epoch (clientFoundRows makes the count the matched rows,
// so an unchanged position still counts). It runs last before the commit, so the row is
// locked only briefly and a newer writer's Fence never waits for a paused older one.
func (s *sink) advance(ctx context.Context, q sqlsink.Execer, pos execute.Position) error {
	return s.fence.Advance(ctx, q, "CURRENT_TIMESTAMP(6)", nil, pos)
}

// WriteAt writes p and moves the watermark to pos in the same transaction (for
// overwrite, the run's transaction, whose watermark moves at CommitAt).
func (s *sink) WriteAt(ctx context.Context, p *execute.Page, pos execute.Position) error {
	if s.fence.Epoch == 0 {
		return fmt.Errorf("mysql: table %q: WriteAt before Fence", s.opts.table.String())
	}
	if s.opts.mode == pipeline.Overwrite {
		return s.writePage(ctx, p, nil)
	}
	return s.writePage(ctx, p, &pos)
}

// CommitAt records pos, fenced, and ends the sink.
func (s *sink) CommitAt(ctx context.Context, pos execute.Position) error {
	if s.fence.Epoch == 0 {
		return fmt.Errorf("mysql: table %q: CommitAt before Fence", s.opts.table.String())
	}
	return s.commit(ctx, &pos)
}
