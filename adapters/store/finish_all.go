package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/dialect/pgdialect"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// finishAllInTx ends every item of a batch not yet marked lost with ONE statement, where
// the dialect has data-modifying WITH (PostgreSQL): the items go as arrays, each row's
// UPDATE keeps the fence of a single finish (its id, the owner, its epoch, running, an
// unexpired lease), and the log lines of all of them ride in the same statement. A batch
// of k runs is then four round trips (BEGIN, the key locks, this, COMMIT) instead of
// k + 3, and PostgreSQL starts one executor instead of k. An item whose row does not come
// back failed its fence and is marked lost; the others get what a single finish does
// after its UPDATE (afterFinish), in the batch's order.
func (s *Store) finishAllInTx(ctx context.Context, tx bun.Tx, owner string, todo []preparedFinish, lost []bool, build runs.CallbackBuilder) error {
	live := make([]int, 0, len(todo))
	for j := range todo {
		if !lost[j] {
			live = append(live, j)
		}
	}
	if len(live) == 0 {
		return nil
	}
	query, args := s.finishAllStatement(owner, todo, live)
	var rows []finishAllRow
	if err := s.scanPrepared(ctx, tx, true, &rows, query, args...); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	ended := make([]*finishRow, len(todo))
	for i := range rows {
		k := rows[i].Ord - 1
		if k < 0 || k >= len(live) || ended[live[k]] != nil {
			return fmt.Errorf("finish a batch of runs: the history answered item %d of %d", rows[i].Ord, len(live))
		}
		ended[live[k]] = &rows[i].finishRow
	}
	for _, j := range live {
		if ended[j] == nil {
			lost[j] = true
			continue
		}
		if err := s.afterFinish(ctx, tx, todo[j], ended[j], build); err != nil {
			return err
		}
	}
	return nil
}

// finishAllRow is a finishRow with the item it answers (1-based, in live order).
type finishAllRow struct {
	finishRow
	Ord int `bun:"ord"`
}

// finishAllStatement is finishStatement for many runs, in bun's form (see scanPrepared):
// each column of the items is one array, so the text is the same for any batch and one
// prepared statement serves them all. NULLIF turns the empty error code and message into
// NULL as nullIfEmpty does for one run. The run ids are matched with = ANY as well as
// joined, so the generic plan fetches exactly those rows by the primary key.
func (s *Store) finishAllStatement(owner string, todo []preparedFinish, live []int) (string, []any) {
	n := len(live)
	ids, statuses, codes, msgs := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	retry := make([]bool, n)
	epochs, delays, addLines, addBytes := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	read, written, pages, bytes, elapsed := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	var lOrd, lN, lAt []int64
	var lLevel, lMsg, lAttrs []string
	for k, j := range live {
		p := todo[j]
		ids[k], epochs[k], retry[k], statuses[k] = p.ref.ID, p.ref.Epoch, p.o.Retry, p.o.Status
		st := p.o.Stats
		read[k], written[k], pages[k], bytes[k], elapsed[k] = st.RowsRead, st.RowsWritten, st.Pages, st.Bytes, st.ElapsedMS
		codes[k], msgs[k], delays[k] = p.o.ErrorCode, p.o.ErrorMessage, p.o.RetryDelay.Milliseconds()
		addLines[k], addBytes[k] = int64(p.addLines), p.addBytes
		for i, r := range p.logRows {
			lOrd, lN, lAt = append(lOrd, int64(k+1)), append(lN, int64(i+1)), append(lAt, r.at.UnixMilli())
			lLevel, lMsg, lAttrs = append(lLevel, r.level), append(lMsg, r.msg), append(lAttrs, r.attrs)
		}
	}
	arr := pgdialect.Array
	args := []any{arr(ids), arr(epochs), arr(retry), arr(statuses), arr(read), arr(written), arr(pages), arr(bytes),
		arr(elapsed), arr(codes), arr(msgs), arr(delays), arr(addLines), arr(addBytes),
		arr(ids), owner, string(run.Running),
		arr(lOrd), arr(lN), arr(lAt), arr(lLevel), arr(lMsg), arr(lAttrs)}
	// The retry condition is the domain's decision unless the run's cancel was requested
	// meanwhile, as in finishStatement.
	const again = "v.retry AND NOT r.cancel_requested"
	fits := logsFit("u")
	return `WITH v AS (SELECT * FROM unnest(?::text[], ?::bigint[], ?::boolean[], ?::text[], ?::bigint[], ?::bigint[],
    ?::bigint[], ?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::bigint[], ?::bigint[], ?::bigint[])
  WITH ORDINALITY AS v(id, epoch, retry, status, rows_read, rows_written, pages, bytes, elapsed_ms,
    error_code, error_message, delay_ms, add_lines, add_bytes, ord)),
u AS (UPDATE sluice_runs r SET status = CASE WHEN ` + again + ` THEN 'pending' ELSE v.status END,
  rows_read = v.rows_read, rows_written = v.rows_written, pages = v.pages, bytes = v.bytes,
  elapsed_ms = r.elapsed_base_ms + v.elapsed_ms,
  error_code = NULLIF(v.error_code, ''), error_message = NULLIF(v.error_message, ''),
  finished_at = CASE WHEN ` + again + ` THEN NULL ELSE {now} END,
  not_before = CASE WHEN ` + again + ` THEN {now} + v.delay_ms ELSE r.not_before END,
  ` + releaseLease + `,
  log_lines = CASE WHEN r.log_truncated THEN r.log_lines ELSE r.log_lines + v.add_lines END,
  log_bytes = CASE WHEN r.log_truncated THEN r.log_bytes ELSE r.log_bytes + v.add_bytes END,
  attempts = COALESCE(jsonb_set(r.attempts, '{-1}', (r.attempts -> -1) || jsonb_build_object('ended_at', {now},
    'outcome', v.status, 'error_code', NULLIF(v.error_code, ''), 'error_message', NULLIF(v.error_message, ''))), r.attempts)
FROM v
WHERE r.id = ANY(?::text[]) AND r.id = v.id AND r.owner = ? AND r.lease_epoch = v.epoch AND r.status = ?
  AND r.lease_expires_at > {now}
RETURNING ` + runCols("r.") + `, v.ord, v.add_lines AS batch_add_lines),
l AS (INSERT INTO sluice_run_logs (run_id, seq, at, level, message, attrs)
  SELECT u.id, u.log_lines - u.batch_add_lines + g.n, g.at, g.level, g.message, g.attrs
  FROM u JOIN unnest(?::bigint[], ?::bigint[], ?::bigint[], ?::text[], ?::text[], ?::text[])
    AS g(ord, n, at, level, message, attrs) ON g.ord = u.ord
  WHERE ` + fits + `)
SELECT ` + runCols("u.") + `, u.ord, ` + queued("u") + `, (` + fits + `) AS logs_written FROM u`, args
}
