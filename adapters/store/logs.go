package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// Per-run log caps (SPEC §2.3): past either, one marker line and nothing more.
const (
	MaxLogLines = 10_000
	MaxLogBytes = 1 << 20
)

// TruncationPrefix starts the message of the marker line written when a log is capped.
const TruncationPrefix = "log truncated: "

// AppendLogs persists lines of a run with increasing seq, enforcing the caps; a missing
// run is run.ErrNotFound. A line counts its message and encoded attributes.
func (s *Store) AppendLogs(ctx context.Context, runID string, lines []cluster.LogLine) error {
	if len(lines) == 0 {
		return nil
	}
	err := s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		return s.appendLogs(ctx, tx, runID, lines)
	})
	return translate("append logs of run "+runID, err)
}

// appendLogs is AppendLogs inside the caller's transaction (Finish writes a run's last
// lines in its terminal transaction).
func (s *Store) appendLogs(ctx context.Context, tx bun.Tx, runID string, lines []cluster.LogLine) error {
	var cur struct {
		Lines     int   `bun:"log_lines"`
		Bytes     int64 `bun:"log_bytes"`
		Truncated bool  `bun:"log_truncated"`
	}
	err := tx.NewRaw("SELECT log_lines, log_bytes, log_truncated FROM sluice_runs WHERE id = ?"+s.d.forUpdate, runID).Scan(ctx, &cur)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("run %s: %w", runID, run.ErrNotFound)
	}
	if err != nil || cur.Truncated {
		return err
	}
	var (
		vals      strings.Builder
		args      []any
		truncated bool
	)
	row := func(at time.Time, level, msg, attrs string) {
		if at.IsZero() {
			at = time.Now()
		}
		if len(args) > 0 {
			vals.WriteString(", ")
		}
		vals.WriteString("(?, ?, ?, ?, ?, ?)")
		cur.Lines++
		cur.Bytes += int64(len(msg) + len(attrs))
		args = append(args, runID, cur.Lines, at.UnixMilli(), level, msg, attrs)
	}
	for _, l := range lines {
		attrs := "{}"
		if len(l.Attrs) > 0 {
			b, err := json.Marshal(l.Attrs)
			if err != nil {
				return fmt.Errorf("log attributes: %w", err)
			}
			attrs = string(b)
		}
		if cur.Lines+1 > MaxLogLines || cur.Bytes+int64(len(l.Message)+len(attrs)) > MaxLogBytes {
			row(l.At, "WARN", fmt.Sprintf("%sthe log of this run reached its cap of %d lines or %d bytes; later lines are not kept",
				TruncationPrefix, MaxLogLines, MaxLogBytes), "{}")
			truncated = true
			break
		}
		row(l.At, l.Level, l.Message, attrs)
	}
	if _, err := tx.NewRaw("INSERT INTO sluice_run_logs (run_id, seq, at, level, message, attrs) VALUES "+vals.String(),
		args...).Exec(ctx); err != nil {
		return err
	}
	_, err = tx.NewRaw("UPDATE sluice_runs SET log_lines = ?, log_bytes = ?, log_truncated = ? WHERE id = ?",
		cur.Lines, cur.Bytes, truncated, runID).Exec(ctx)
	return err
}

// Logs returns up to limit lines of a run with seq > after, oldest first. A missing run
// is run.ErrNotFound; limit ≤ 0 means 1,000.
func (s *Store) Logs(ctx context.Context, id string, after int64, limit int) ([]runs.LogLine, error) {
	if limit <= 0 {
		limit = 1000
	}
	var rows []struct {
		Seq     int64  `bun:"seq"`
		At      int64  `bun:"at"`
		Level   string `bun:"level"`
		Message string `bun:"message"`
		Attrs   string `bun:"attrs"`
	}
	if err := s.db.NewRaw(`SELECT seq, at, level, message, attrs FROM sluice_run_logs
WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`, id, after, limit).Scan(ctx, &rows); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, translate("read logs of run "+id, err)
	}
	if len(rows) == 0 {
		var n int
		if err := s.db.NewRaw("SELECT count(*) FROM sluice_runs WHERE id = ?", id).Scan(ctx, &n); err != nil {
			return nil, translate("read logs of run "+id, err)
		}
		if n == 0 {
			return nil, fmt.Errorf("run %s: %w", id, run.ErrNotFound)
		}
	}
	out := make([]runs.LogLine, len(rows))
	for i, r := range rows {
		out[i] = runs.LogLine{Seq: r.Seq, At: fromMS(r.At), Level: r.Level, Message: r.Message}
		if r.Attrs != "" && r.Attrs != "{}" {
			if err := json.Unmarshal([]byte(r.Attrs), &out[i].Attrs); err != nil {
				return nil, fmt.Errorf("run %s log line %d: attributes are not JSON: %w", id, r.Seq, err)
			}
		}
	}
	return out, nil
}
