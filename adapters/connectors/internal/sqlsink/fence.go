package sqlsink

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/sluicehq/sluice/adapters/connectors/internal/watermark"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/run"
)

// Fence is a writer's hold on one watermark row: the state key and the epoch it took.
type Fence struct {
	Table string // quoted watermark table
	Key   string
	Epoch int64 // 0 until fenced
}

// Taken records the epoch a writer took and decodes the position the row holds.
func (f *Fence) Taken(epoch int64, bookmark sql.NullString, rows int64, completedBy sql.NullString) (execute.Watermark, error) {
	pos, err := watermark.Decode(watermark.Row{Bookmark: nullable(bookmark), Rows: rows, CompletedBy: nullable(completedBy)})
	if err != nil {
		return execute.Watermark{}, err
	}
	f.Epoch = epoch
	return execute.Watermark{Epoch: epoch, Position: pos}, nil
}

func nullable(s sql.NullString) *string {
	if !s.Valid {
		return nil
	}
	return &s.String
}

// Take runs take, the statement(s) that take the key's next epoch; when they fail because
// the table predates the completed_by column (missing says so), it adds the column and
// runs take once more. Two writers upgrading at once both try to add it; the one that
// finds it there (duplicate says so) has nothing left to do.
func (f *Fence) Take(ctx context.Context, db Execer, columnType string, missing, duplicate func(error) bool,
	take func() (execute.Watermark, error)) (execute.Watermark, error) {
	w, err := take()
	if err == nil || !missing(err) {
		return w, err
	}
	_, aerr := db.ExecContext(ctx, "ALTER TABLE "+f.Table+" ADD COLUMN "+watermark.CompletedBy+" "+columnType)
	if aerr != nil && !duplicate(aerr) {
		return execute.Watermark{}, fmt.Errorf("add the %s column to a watermark table of an earlier version: %w",
			watermark.CompletedBy, aerr)
	}
	return take()
}

// Advance moves the watermark to pos inside the caller's transaction, but only while the
// row still holds this writer's epoch; otherwise the caller rolls back. now is the SQL
// of updated_at's new value, with its arguments in nowArgs.
func (f *Fence) Advance(ctx context.Context, q Execer, now string, nowArgs []any, pos execute.Position) error {
	if f.Epoch == 0 {
		return errors.New("the watermark was never fenced")
	}
	r, err := watermark.Encode(pos)
	if err != nil {
		return err
	}
	args := append([]any{r.Bookmark, r.Rows, r.CompletedBy}, nowArgs...)
	args = append(args, f.Key, f.Epoch)
	res, err := q.ExecContext(ctx, `UPDATE `+f.Table+` SET bookmark = ?, rows_after = ?, `+watermark.CompletedBy+` = ?, updated_at = `+now+`
WHERE state_key = ? AND epoch = ?`, args...)
	if err != nil {
		return fmt.Errorf("watermark: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("watermark: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("watermark %q: epoch %d was taken by a newer writer; this writer stops and its page is rolled back: %w",
			f.Key, f.Epoch, run.ErrLeaseLost)
	}
	return nil
}
