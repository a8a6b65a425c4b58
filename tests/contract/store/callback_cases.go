package storecontract

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

func callbackCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"finish writes an outbox row only when the builder says so": func(t *testing.T, e *env) {
			no := &builder{ok: false}
			c := e.claimOne(t, "p", longTTL)
			require.NoError(t, e.s.Finish(e.ctx, e.owner.InstanceID, cluster.Ref{ID: c.ID, Epoch: c.Epoch}, cluster.Outcome{Status: "completed"}, no.build))
			require.Len(t, no.seen, 1)
			require.Empty(t, e.outbox(t))

			yes := &builder{ok: true}
			c = e.claimOne(t, "q", longTTL, func(r *runs.Record) {
				r.Labels = map[string]string{"team": "x"}
				r.RunKey = "rk"
				r.Callback = &runs.Callback{URL: "http://127.0.0.1:9/cb", On: []string{"completed"}}
			})
			require.NoError(t, e.s.Finish(e.ctx, e.owner.InstanceID, cluster.Ref{ID: c.ID, Epoch: c.Epoch},
				cluster.Outcome{Status: "completed", Stats: cluster.Progress{RowsWritten: 7}}, yes.build))
			require.Len(t, yes.seen, 1)
			in := yes.seen[0]
			require.Equal(t, c.ID, in.RunID)
			require.Equal(t, "q", in.Name)
			require.Equal(t, "completed", in.Status)
			require.Equal(t, "default", in.Pool)
			require.Equal(t, "rk", in.RunKey)
			require.Equal(t, map[string]string{"team": "x"}, in.Labels)
			require.Equal(t, int64(7), in.Stats.RowsWritten)
			require.False(t, in.StartedAt.IsZero() || in.FinishedAt.IsZero())
			require.Equal(t, &runs.Callback{URL: "http://127.0.0.1:9/cb", On: []string{"completed"}}, in.Callback)
			items := e.outbox(t)
			require.Len(t, items, 1)
			require.Equal(t, c.ID, items[0].RunID)
			require.Equal(t, "http://127.0.0.1:9/hook", items[0].URL)
			require.JSONEq(t, `{"run_id":"`+c.ID+`","status":"completed"}`, string(items[0].Payload))
			require.Zero(t, items[0].Attempts)
		},
		"a rolled-back finish writes no outbox row and keeps the run": func(t *testing.T, e *env) {
			c := e.claimOne(t, "p", longTTL)
			ctx, cancel := context.WithCancel(e.ctx)
			defer cancel()
			// The builder runs inside the transaction; cancelling there makes the rest of
			// the transaction fail, so everything rolls back.
			build := func(in runs.CallbackInput) (string, []byte, bool) {
				cancel()
				return "http://127.0.0.1:9/hook", []byte("{}"), true
			}
			err := e.s.Finish(ctx, e.owner.InstanceID, cluster.Ref{ID: c.ID, Epoch: c.Epoch}, cluster.Outcome{Status: "completed"}, build)
			require.Error(t, err)
			require.Empty(t, e.outbox(t))
			got := e.get(t, c.ID)
			require.Equal(t, "running", got.Status)
			require.Equal(t, e.owner.InstanceID, got.Owner)
			require.NoError(t, e.s.Finish(e.ctx, e.owner.InstanceID, cluster.Ref{ID: c.ID, Epoch: c.Epoch}, cluster.Outcome{Status: "completed"}, nil))
		},
		"cancelling a pending run writes its outbox row": func(t *testing.T, e *env) {
			b := &builder{ok: true}
			r := e.create(t, rec("p"))
			_, ok, err := e.s.CancelQueued(e.ctx, r.ID, b.build)
			require.NoError(t, err)
			require.True(t, ok)
			require.Len(t, b.seen, 1)
			require.Equal(t, "cancelled", b.seen[0].Status)
			require.Len(t, e.outbox(t), 1)
		},
		"a hand-back of a cancel-requested run ends it cancelled with its callback": func(t *testing.T, e *env) {
			b := &builder{ok: true}
			s := e.open(t, store.Options{Callbacks: b.build})
			if !e.h.Shared {
				s = e.s // memory: a second Open is another database
				b = nil
			}
			c := e.claimOne(t, "p", longTTL)
			e.requestCancel(t, c.ID)
			require.NoError(t, s.HandBack(e.ctx, e.owner.InstanceID, cluster.Ref{ID: c.ID, Epoch: c.Epoch}, cluster.Progress{}))
			got := e.get(t, c.ID)
			require.Equal(t, "cancelled", got.Status)
			require.Equal(t, 1, got.Attempt, "a cancelled run keeps its attempt")
			require.Equal(t, run.Outcome("handed_back"), got.Attempts[0].Outcome)
			require.False(t, got.FinishedAt.IsZero())
			if b != nil {
				require.Len(t, b.seen, 1)
				require.Len(t, e.outbox(t), 1)
			}
		},
		"outbox leases, retries and deliveries": func(t *testing.T, e *env) {
			b := &builder{ok: true}
			for range 3 {
				r := e.create(t, rec("p"))
				_, _, err := e.s.CancelQueued(e.ctx, r.ID, b.build)
				require.NoError(t, err)
			}
			first, err := e.s.ClaimOutbox(e.ctx, "sender-a", 2, time.Hour)
			require.NoError(t, err)
			require.Len(t, first, 2)
			second, err := e.s.ClaimOutbox(e.ctx, "sender-b", 10, time.Hour)
			require.NoError(t, err)
			require.Len(t, second, 1, "leased rows are not handed out twice")
			require.NotEqual(t, first[0].ID, second[0].ID)
			none, err := e.s.ClaimOutbox(e.ctx, "sender-b", 10, time.Hour)
			require.NoError(t, err)
			require.Empty(t, none)

			require.NoError(t, e.s.OutboxDelivered(e.ctx, first[0].ID))
			require.NoError(t, e.s.OutboxRetry(e.ctx, first[1].ID, time.Now().Add(-time.Second), "503 from receiver"))
			require.NoError(t, e.s.OutboxRetry(e.ctx, second[0].ID, time.Now().Add(time.Hour), "timeout"))
			due, err := e.s.ClaimOutbox(e.ctx, "sender-a", 10, time.Hour)
			require.NoError(t, err)
			require.Len(t, due, 1, "only the retry that is due")
			require.Equal(t, first[1].ID, due[0].ID)
			require.Equal(t, 1, due[0].Attempts)
		},
		"an expired outbox lease is claimable again": func(t *testing.T, e *env) {
			b := &builder{ok: true}
			r := e.create(t, rec("p"))
			_, _, err := e.s.CancelQueued(e.ctx, r.ID, b.build)
			require.NoError(t, err)
			got, err := e.s.ClaimOutbox(e.ctx, "sender-a", 1, 200*time.Millisecond)
			require.NoError(t, err)
			require.Len(t, got, 1)
			require.Eventually(t, func() bool {
				again, err := e.s.ClaimOutbox(e.ctx, "sender-b", 1, time.Hour)
				return assertNoError(t, err) && len(again) == 1
			}, 10*time.Second, 50*time.Millisecond)
		},
	}
}
