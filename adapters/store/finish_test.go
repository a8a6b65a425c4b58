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
