package store_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/tests/testdb"
)

// A finished run with log lines and no queued sibling costs PostgreSQL two statements
// inside its transaction: the key's shared lock, and one statement that ends the run and
// writes its lines (the promotion lookup rides in it too).
func TestFinishOnPostgresIsTwoStatementsInItsTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, tap := openTapped(ctx, t)
	_, err := s.Create(ctx, newRun("p"), nil)
	require.NoError(t, err)
	got, err := s.Claim(ctx, cluster.Owner{InstanceID: "m"}, []string{"default"}, 1, time.Minute)
	require.NoError(t, err)
	require.Len(t, got, 1)

	lines := []cluster.LogLine{{At: time.Now(), Level: "INFO", Message: "started"}, {At: time.Now(), Level: "INFO", Message: "done"}}
	seen := tap(func() {
		require.NoError(t, s.Finish(ctx, "m", cluster.Ref{ID: got[0].ID, Epoch: got[0].Epoch},
			cluster.Outcome{Status: "completed", Logs: lines, Tenant: got[0].Tenant, Name: got[0].Name}, nil))
	})
	require.Equal(t, []string{"BEGIN", "SELECT", "WITH", "COMMIT"}, seen)

	logs, err := s.Logs(ctx, got[0].ID, 0, 10)
	require.NoError(t, err)
	require.Len(t, logs, 2)
	require.Equal(t, "done", logs[1].Message)
	require.EqualValues(t, 2, logs[1].Seq)
}

// On PostgreSQL the claim of one pool and the finish go as prepared statements, their
// arguments as parameters ($n, no value in the text); with SimpleProtocol (--poll-only)
// and for a claim of several pools, as text with the values inline.
func TestClaimAndFinishArePreparedUnlessSimpleProtocol(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name     string
		simple   bool
		pools    []string
		prepared bool
	}{
		{"one pool", false, []string{"default"}, true},
		{"simple protocol", true, []string{"default"}, false},
		{"several pools", false, []string{"default", "gpu"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			var (
				mu    sync.Mutex
				stmts []string
			)
			s, err := store.Open(ctx, testdb.Postgres(t), store.Options{PollOnly: true, SimpleProtocol: tc.simple,
				QueryHook: hookFunc(func(q string) {
					mu.Lock()
					defer mu.Unlock()
					stmts = append(stmts, q)
				})})
			require.NoError(t, err)
			defer s.Close()
			require.NoError(t, s.Migrate(ctx))
			_, err = s.Create(ctx, newRun("p"), nil)
			require.NoError(t, err)
			got, err := s.Claim(ctx, cluster.Owner{InstanceID: "member-x"}, tc.pools, 1, time.Minute)
			require.NoError(t, err)
			require.Len(t, got, 1)
			require.NoError(t, s.Finish(ctx, "member-x", cluster.Ref{ID: got[0].ID, Epoch: got[0].Epoch},
				cluster.Outcome{Status: "completed", Tenant: got[0].Tenant, Name: got[0].Name}, nil))

			mu.Lock()
			seen := append([]string(nil), stmts...)
			mu.Unlock()
			claim, finish := find(seen, "UPDATE sluice_runs r SET status = 'running'"), find(seen, "WITH u AS (UPDATE sluice_runs")
			require.NotEmpty(t, claim, "no claim among %v", seen)
			require.NotEmpty(t, finish, "no finish among %v", seen)
			if tc.prepared {
				require.Contains(t, claim, "$1")
				require.NotContains(t, claim, "member-x")
			} else {
				require.Contains(t, claim, "'member-x'")
			}
			if tc.simple {
				require.Contains(t, finish, "'"+got[0].ID+"'")
			} else {
				require.Contains(t, finish, "$1")
				require.NotContains(t, finish, got[0].ID)
			}
		})
	}
}

// find returns the first statement starting with prefix, or "".
func find(stmts []string, prefix string) string {
	for _, q := range stmts {
		if strings.HasPrefix(q, prefix) {
			return q
		}
	}
	return ""
}

// A batch of finishes costs PostgreSQL the same two statements inside its transaction
// whatever its size: one that takes every key's shared lock, and one that ends every run
// and writes their lines — not a statement per run.
func TestFinishBatchOnPostgresIsTwoStatementsInItsTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, tap := openTapped(ctx, t)
	const n = 6
	for i := range n {
		_, err := s.Create(ctx, newRun(string(rune('a'+i))), nil)
		require.NoError(t, err)
	}
	got, err := s.Claim(ctx, cluster.Owner{InstanceID: "m"}, []string{"default"}, n, time.Minute)
	require.NoError(t, err)
	require.Len(t, got, n)
	var batch []cluster.Finishing
	for _, c := range got {
		lines := []cluster.LogLine{{At: time.Now(), Level: "INFO", Message: "done " + c.Name}}
		batch = append(batch, cluster.Finishing{Ref: cluster.Ref{ID: c.ID, Epoch: c.Epoch},
			Outcome: cluster.Outcome{Status: "completed", Logs: lines, Tenant: c.Tenant, Name: c.Name}})
	}

	var errs []error
	seen := tap(func() { errs = s.FinishBatch(ctx, "m", batch, nil) })
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, []string{"BEGIN", "SELECT", "WITH", "COMMIT"}, seen)
	for _, c := range got {
		r, err := s.Get(ctx, c.ID)
		require.NoError(t, err)
		require.Equal(t, "completed", r.Status)
		logs, err := s.Logs(ctx, c.ID, 0, 10)
		require.NoError(t, err)
		require.Len(t, logs, 1)
		require.Equal(t, "done "+c.Name, logs[0].Message)
	}
}

// openTapped opens a migrated PostgreSQL history whose statements tap records: tap runs
// fn and answers the first word of every statement fn sent, upper-cased.
func openTapped(ctx context.Context, t *testing.T) (*store.Store, func(fn func()) []string) {
	t.Helper()
	var (
		mu    sync.Mutex
		stmts []string
		on    bool
	)
	s, err := store.Open(ctx, testdb.Postgres(t), store.Options{PollOnly: true, QueryHook: hookFunc(func(q string) {
		mu.Lock()
		defer mu.Unlock()
		if on {
			stmts = append(stmts, strings.ToUpper(strings.Fields(q)[0]))
		}
	})})
	require.NoError(t, err)
	t.Cleanup(func() { _ = s.Close() })
	require.NoError(t, s.Migrate(ctx))
	return s, func(fn func()) []string {
		mu.Lock()
		stmts, on = nil, true
		mu.Unlock()
		fn()
		mu.Lock()
		defer mu.Unlock()
		on = false
		return stmts
	}
}
