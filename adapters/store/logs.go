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

// appendLogs is AppendLogs inside the caller's transaction (a shard's end writes its
// last lines in its terminal transaction).
func (s *Store) appendLogs(ctx context.Context, tx bun.Tx, runID string, lines []cluster.LogLine) error {
	var cur logCounters
	err := tx.NewRaw("SELECT log_lines, log_bytes, log_truncated FROM sluice_runs WHERE id = ?"+s.d.forUpdate, runID).Scan(ctx, &cur)
	if errors.Is(err, sql.ErrNoRows) {
		return fmt.Errorf("run %s: %w", runID, run.ErrNotFound)
	}
	if err != nil || cur.Truncated {
		return err
	}
	rows, err := prepareLogs(lines)
	if err != nil {
		return err
	}
	return writeCappedLogs(ctx, tx, runID, cur, rows)
}

// logCounters are a run's log counters as sluice_runs keeps them.
type logCounters struct {
	Lines     int   `bun:"log_lines"`
	Bytes     int64 `bun:"log_bytes"`
	Truncated bool  `bun:"log_truncated"`
}

// logRow is a line ready to insert; size is what it counts against the byte cap.
type logRow struct {
	at                time.Time
	level, msg, attrs string
}

func (r logRow) size() int64 { return int64(len(r.msg) + len(r.attrs)) }

// prepareLogs encodes the lines' attributes and stamps lines without a time.
func prepareLogs(lines []cluster.LogLine) ([]logRow, error) {
	out := make([]logRow, 0, len(lines))
	for _, l := range lines {
		attrs := "{}"
		if len(l.Attrs) > 0 {
			b, err := json.Marshal(l.Attrs)
			if err != nil {
				return nil, fmt.Errorf("log attributes: %w", err)
			}
			attrs = string(b)
		}
		at := l.At
		if at.IsZero() {
			at = time.Now()
		}
		out = append(out, logRow{at: at, level: l.Level, msg: l.Message, attrs: attrs})
	}
	return out, nil
}

// logTotals is what rows add to the counters when none is capped.
func logTotals(rows []logRow) (lines int, bytes int64) {
	for _, r := range rows {
		bytes += r.size()
	}
	return len(rows), bytes
}

// capLogs keeps the rows that fit under the caps after cur and, past a cap, one marker
// line instead of the rest; it answers the counters after them.
func capLogs(cur logCounters, rows []logRow) ([]logRow, logCounters) {
	for i, r := range rows {
		if cur.Lines+1 > MaxLogLines || cur.Bytes+r.size() > MaxLogBytes {
			marker := logRow{at: r.at, level: "WARN", attrs: "{}", msg: fmt.Sprintf(
				"%sthe log of this run reached its cap of %d lines or %d bytes; later lines are not kept",
				TruncationPrefix, MaxLogLines, MaxLogBytes)}
			cur.Lines++
			cur.Bytes += marker.size()
			cur.Truncated = true
			return append(rows[:i:i], marker), cur
		}
		cur.Lines++
		cur.Bytes += r.size()
	}
	return rows, cur
}

// writeCappedLogs inserts rows after the counters cur, capped, and stores the counters
// after them.
func writeCappedLogs(ctx context.Context, tx bun.Tx, runID string, cur logCounters, rows []logRow) error {
	kept, next := capLogs(cur, rows)
	if err := insertLogs(ctx, tx, runID, cur.Lines+1, kept); err != nil {
		return err
	}
	_, err := tx.NewRaw("UPDATE sluice_runs SET log_lines = ?, log_bytes = ?, log_truncated = ? WHERE id = ?",
		next.Lines, next.Bytes, next.Truncated, runID).Exec(ctx)
	return err
}

// insertLogs inserts rows with seq numbers from firstSeq in one statement.
func insertLogs(ctx context.Context, tx bun.Tx, runID string, firstSeq int, rows []logRow) error {
	if len(rows) == 0 {
		return nil
	}
	var vals strings.Builder
	args := make([]any, 0, 6*len(rows))
	for i, r := range rows {
		if i > 0 {
			vals.WriteString(", ")
		}
		vals.WriteString("(?, ?, ?, ?, ?, ?)")
		args = append(args, runID, firstSeq+i, r.at.UnixMilli(), r.level, r.msg, r.attrs)
	}
	_, err := tx.NewRaw("INSERT INTO sluice_run_logs (run_id, seq, at, level, message, attrs) VALUES "+vals.String(),
		args...).Exec(ctx)
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
