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
	url := testdb.Postgres(t)
	var (
		mu    sync.Mutex
		stmts []string
		on    bool
	)
	s, err := store.Open(ctx, url, store.Options{PollOnly: true, QueryHook: hookFunc(func(q string) {
		mu.Lock()
		defer mu.Unlock()
		if on {
			stmts = append(stmts, strings.Fields(q)[0])
		}
	})})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Migrate(ctx))
	_, err = s.Create(ctx, newRun("p"), nil)
	require.NoError(t, err)
	got, err := s.Claim(ctx, cluster.Owner{InstanceID: "m"}, []string{"default"}, 1, time.Minute)
	require.NoError(t, err)
	require.Len(t, got, 1)

	mu.Lock()
	on = true
	mu.Unlock()
	lines := []cluster.LogLine{{At: time.Now(), Level: "INFO", Message: "started"}, {At: time.Now(), Level: "INFO", Message: "done"}}
	require.NoError(t, s.Finish(ctx, "m", cluster.Ref{ID: got[0].ID, Epoch: got[0].Epoch},
		cluster.Outcome{Status: "completed", Logs: lines, Tenant: got[0].Tenant, Name: got[0].Name}, nil))
	mu.Lock()
	seen := stmts
	on = false
	mu.Unlock()
	var body []string
	for _, st := range seen {
		if up := strings.ToUpper(st); up != "BEGIN" && up != "COMMIT" {
			body = append(body, up)
		}
	}
	require.Equal(t, []string{"SELECT", "WITH"}, body, "statements: %v", seen)

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
