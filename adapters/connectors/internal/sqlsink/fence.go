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
func (f *Fence) Taken(epoch int64, bookmark sql.NullString, rows int64) (execute.Watermark, error) {
	var b *string
	if bookmark.Valid {
		b = &bookmark.String
	}
	pos, err := watermark.Decode(b, rows)
	if err != nil {
		return execute.Watermark{}, err
	}
	f.Epoch = epoch
	return execute.Watermark{Epoch: epoch, Position: pos}, nil
}

// Advance moves the watermark to pos inside the caller's transaction, but only while the
// row still holds this writer's epoch; otherwise the caller rolls back. now is the SQL
// of updated_at's new value, with its arguments in nowArgs.
func (f *Fence) Advance(ctx context.Context, q Execer, now string, nowArgs []any, pos execute.Position) error {
	if f.Epoch == 0 {
		return errors.New("the watermark was never fenced")
	}
	bookmark, rows, err := watermark.Encode(pos)
	if err != nil {
		return err
	}
	args := append([]any{bookmark, rows}, nowArgs...)
	args = append(args, f.Key, f.Epoch)
	res, err := q.ExecContext(ctx, `UPDATE `+f.Table+` SET bookmark = ?, rows_after = ?, updated_at = `+now+`
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
