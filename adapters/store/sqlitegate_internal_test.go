package store

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"
)

// openGated opens a migrated SQLite file history whose busy_timeout is busy and whose
// writers wait at most wait for their turn.
func openGated(t *testing.T, busy, wait time.Duration) *Store {
	t.Helper()
	path := filepath.Join(t.TempDir(), "h.db")
	s, err := openSQLite(path, busy, wait)
	require.NoError(t, err)
	s.log, s.redact = slog.New(slog.DiscardHandler), redactor("sqlite:"+path) // as Open does
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.Migrate(context.Background()))
	return s
}

// Writers of one process queue for the write lock instead of racing for it in SQLite's
// busy handler: a write that waits longer than busy_timeout behind another of the same
// process still lands. Without the gate the second writer fails with SQLITE_BUSY after
// busy (100 ms) while the first holds its transaction for 3× that.
func TestSQLiteWritersOfOneProcessTakeTurns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const busy = 100 * time.Millisecond
	s := openGated(t, busy, time.Minute)

	holding := make(chan struct{})
	first := make(chan error, 1)
	go func() {
		first <- s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
			if _, err := tx.ExecContext(ctx, "INSERT INTO sluice_console_signouts (session_id, expires_at) VALUES (?, ?)",
				"first", time.Now().UnixMilli()); err != nil {
				return err
			}
			close(holding)
			time.Sleep(3 * busy) // longer than busy_timeout: a lower bound, not a deadline
			return nil
		})
	}()
	<-holding

	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			// Both a transaction and a lone statement wait for their turn.
			if i%2 == 0 {
				_, err := s.db.ExecContext(ctx, "INSERT INTO sluice_console_signouts (session_id, expires_at) VALUES (?, ?)",
					"lone-"+string(rune('a'+i)), time.Now().UnixMilli())
				errs <- err
				return
			}
			errs <- s.db.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
				_, err := tx.ExecContext(ctx, "INSERT INTO sluice_console_signouts (session_id, expires_at) VALUES (?, ?)",
					"tx-"+string(rune('a'+i)), time.Now().UnixMilli())
				return err
			})
		})
	}
	require.NoError(t, <-first)
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err, "a writer of this process failed instead of waiting its turn")
	}
	var n int
	require.NoError(t, s.db.NewRaw("SELECT count(*) FROM sluice_console_signouts").Scan(ctx, &n))
	require.Equal(t, 9, n)
}

// Reads do not queue behind a writer: WAL readers see the last commit while a write
// transaction is open.
func TestSQLiteReadsDoNotWaitForTheWriter(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openGated(t, time.Minute, time.Minute)
	tx, err := s.db.BeginTx(ctx, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback() })
	var n int
	require.NoError(t, s.db.NewRaw("SELECT count(*) FROM sluice_console_signouts").Scan(ctx, &n),
		"a read outside the open transaction answers at once")
	require.Zero(t, n)
}

// A write issued outside the transaction its own goroutine holds can never get its turn:
// it fails after the gate's wait, naming the cause, instead of hanging.
func TestSQLiteWriteBehindItsOwnTransactionFails(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openGated(t, time.Minute, 200*time.Millisecond)
	tx, err := s.db.BeginTx(ctx, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = tx.Rollback() })
	_, err = s.db.ExecContext(ctx, "DELETE FROM sluice_console_signouts")
	require.ErrorContains(t, err, "the history is busy")

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	_, err = s.db.ExecContext(cctx, "DELETE FROM sluice_console_signouts")
	require.ErrorIs(t, err, context.Canceled, "a cancelled caller stops waiting")
}

func TestReadOnlyStatements(t *testing.T) {
	t.Parallel()
	for q, want := range map[string]bool{
		"SELECT 1":                               true,
		"  select * from x":                      true,
		"(SELECT 1) UNION (SELECT 2)":            true,
		"-- why\nSELECT 1":                       true,
		"/* hint */ explain query plan select 1": true,
		"VALUES (1)":                             true,
		"WITH d AS (SELECT 1) DELETE FROM x":     false,
		"UPDATE x SET a = 1 RETURNING a":         false,
		"INSERT INTO x VALUES (1)":               false,
		"DELETE FROM x":                          false,
		"BEGIN IMMEDIATE":                        false,
		"PRAGMA wal_checkpoint(TRUNCATE)":        false,
		"/* unterminated":                        false,
	} {
		require.Equal(t, want, readOnly(q), q)
	}
}
