package storecontract

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/uptrace/bun"

	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
)

// finishBatchCases cover FinishBatch, the group commit of finishes: every item is the
// fenced finish Finish writes, and an item whose fence fails is refused alone.
func finishBatchCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"a batch lands every finish in one transaction and refuses a stale one alone": func(t *testing.T, e *env) {
			b := &builder{ok: true}
			// Only a run that asked for a callback gets an outbox row.
			build := func(in runs.CallbackInput) (string, []byte, bool) {
				if in.Callback == nil {
					return "", nil, false
				}
				return b.build(in)
			}
			done := e.claimOne(t, "done", longTTL)
			failed := e.claimOne(t, "failed", longTTL)
			hooked := e.claimOne(t, "hooked", longTTL, func(r *runs.Record) {
				r.Callback = &runs.Callback{URL: "http://127.0.0.1:9/cb", On: []string{"completed"}}
			})
			retried := e.claimOne(t, "retried", longTTL)
			stale := e.claimOne(t, "stale", longTTL)
			// A peer owns this one: the batch's owner may not end it.
			theirs := e.create(t, rec("theirs", func(r *runs.Record) { r.Pool = "peer" }))
			peer := cluster.Owner{InstanceID: "member-b", Listen: "127.0.0.1:8081"}
			got, err := e.s.Claim(e.ctx, peer, []string{"peer"}, 1, longTTL)
			require.NoError(t, err)
			require.Len(t, got, 1)

			ref := func(c cluster.Claimed) cluster.Ref { return cluster.Ref{ID: c.ID, Epoch: c.Epoch} }
			batch := []cluster.Finishing{
				{Ref: ref(done), Outcome: cluster.Outcome{Status: "completed", Name: "done",
					Stats: cluster.Progress{RowsRead: 3, RowsWritten: 3}, Logs: logLines(2, "done")}},
				{Ref: ref(failed), Outcome: cluster.Outcome{Status: "failed", Name: "failed",
					ErrorCode: string(run.CodePipelineError), ErrorMessage: "boom"}},
				{Ref: ref(hooked), Outcome: cluster.Outcome{Status: "completed"}}, // no key: read from the row
				{Ref: ref(retried), Outcome: cluster.Outcome{Status: "failed", Name: "retried", Retry: true,
					RetryDelay: time.Hour, ErrorCode: string(run.CodePipelineError), ErrorMessage: "again"}},
				{Ref: cluster.Ref{ID: stale.ID, Epoch: stale.Epoch - 1}, Outcome: cluster.Outcome{Status: "completed", Name: "stale"}},
				{Ref: cluster.Ref{ID: theirs.ID, Epoch: got[0].Epoch}, Outcome: cluster.Outcome{Status: "completed", Name: "theirs"}},
				{Ref: ref(done), Outcome: cluster.Outcome{Status: "running"}}, // not an ending at all
			}
			var commits int
			stop := e.tap(func(ev *bun.QueryEvent) {
				if strings.EqualFold(ev.Operation(), "COMMIT") {
					commits++
				}
			})
			errs := e.s.FinishBatch(e.ctx, e.owner.InstanceID, batch, build)
			stop()
			require.Len(t, errs, len(batch))
			require.NoError(t, errs[0])
			require.NoError(t, errs[1])
			require.NoError(t, errs[2])
			require.NoError(t, errs[3])
			require.ErrorIs(t, errs[4], run.ErrLeaseLost)
			require.ErrorIs(t, errs[5], run.ErrLeaseLost)
			var te *run.TransitionError
			require.ErrorAs(t, errs[6], &te)
			require.Equal(t, 1, commits, "one transaction for the whole batch")

			r := e.get(t, done.ID)
			require.Equal(t, "completed", r.Status)
			require.Equal(t, int64(3), r.Stats.RowsWritten)
			require.Equal(t, run.OutcomeCompleted, r.Attempts[len(r.Attempts)-1].Outcome)
			lines, err := e.s.Logs(e.ctx, done.ID, 0, 10)
			require.NoError(t, err)
			require.Len(t, lines, 2)

			r = e.get(t, failed.ID)
			require.Equal(t, "failed", r.Status)
			require.Equal(t, string(run.CodePipelineError), r.ErrorCode)
			require.Equal(t, run.OutcomeFailed, r.Attempts[len(r.Attempts)-1].Outcome)

			require.Equal(t, "completed", e.get(t, hooked.ID).Status)
			items := e.outbox(t)
			require.Len(t, items, 1, "the callback row rides in the batch")
			require.Equal(t, hooked.ID, items[0].RunID)

			r = e.get(t, retried.ID)
			require.Equal(t, "pending", r.Status)
			require.Equal(t, run.OutcomeFailed, r.Attempts[len(r.Attempts)-1].Outcome)

			for _, id := range []string{stale.ID, theirs.ID} {
				r = e.get(t, id)
				require.Equal(t, "running", r.Status, "a refused finish writes nothing")
				require.True(t, r.Attempts[len(r.Attempts)-1].Open())
			}
			require.Equal(t, peer.InstanceID, e.get(t, theirs.ID).Owner)
			// The stale item's run is still ours to finish at its real epoch.
			require.NoError(t, e.s.Finish(e.ctx, e.owner.InstanceID, ref(stale), cluster.Outcome{Status: "completed"}, nil))
		},
		"a batch writes each run's own last lines after its earlier ones, caps them, and promotes each key's queue": func(t *testing.T, e *env) {
			a := e.claimOne(t, "inc-a", longTTL, serial)
			b := e.claimOne(t, "inc-b", longTTL, serial)
			qa, qb := rec("inc-a", serial), rec("inc-b", serial)
			for _, q := range []*runs.Record{qa, qb} {
				res, err := e.s.Create(e.ctx, q, nil)
				require.NoError(t, err)
				require.Equal(t, "queued", res.Status)
			}
			early := e.claimOne(t, "early", longTTL)
			require.NoError(t, e.s.AppendLogs(e.ctx, early.ID, logLines(2, "early")))
			full := e.claimOne(t, "full", longTTL)
			require.NoError(t, e.s.AppendLogs(e.ctx, full.ID, logLines(9_998, "line")))
			quiet := e.claimOne(t, "quiet", longTTL)

			ref := func(c cluster.Claimed) cluster.Ref { return cluster.Ref{ID: c.ID, Epoch: c.Epoch} }
			errs := e.s.FinishBatch(e.ctx, e.owner.InstanceID, []cluster.Finishing{
				{Ref: ref(a), Outcome: cluster.Outcome{Status: "completed", Name: "inc-a", Logs: logLines(3, "a")}},
				{Ref: ref(b), Outcome: cluster.Outcome{Status: "failed", Name: "inc-b", ErrorCode: "x", ErrorMessage: "y",
					Logs: logLines(1, "b")}},
				{Ref: ref(early), Outcome: cluster.Outcome{Status: "completed", Name: "early", Logs: logLines(2, "last")}},
				{Ref: ref(full), Outcome: cluster.Outcome{Status: "completed", Name: "full", Logs: logLines(5, "tail")}},
				{Ref: ref(quiet), Outcome: cluster.Outcome{Status: "cancelled", Name: "quiet"}},
			}, nil)
			for i, err := range errs {
				require.NoError(t, err, "item %d", i)
			}
			messages := func(id string) []string {
				var out []string
				for i, l := range readAllLogs(t, e, id) {
					require.Equal(t, int64(i+1), l.Seq)
					out = append(out, l.Message)
				}
				return out
			}
			require.Equal(t, []string{"a 0", "a 1", "a 2"}, messages(a.ID))
			require.Equal(t, []string{"b 0"}, messages(b.ID))
			require.Equal(t, []string{"early 0", "early 1", "last 0", "last 1"}, messages(early.ID))
			require.Empty(t, messages(quiet.ID))
			require.Equal(t, 3, e.get(t, a.ID).LogLines)
			require.Equal(t, 4, e.get(t, early.ID).LogLines)

			all := messages(full.ID)
			require.Len(t, all, 10_001, "two tail lines fit, then the marker")
			require.Equal(t, "tail 1", all[9_999])
			require.True(t, strings.HasPrefix(all[10_000], "log truncated: "), all[10_000])
			got := e.get(t, full.ID)
			require.Equal(t, 10_001, got.LogLines, "the counters the batch moved by 5 lines were corrected")
			require.True(t, got.LogTruncated)

			for _, q := range []*runs.Record{qa, qb} {
				require.Equal(t, "pending", e.get(t, q.ID).Status, "each key's queued run is promoted")
			}
			r := e.get(t, b.ID)
			require.Equal(t, "failed", r.Status)
			require.Equal(t, "x", r.ErrorCode)
			require.Equal(t, &run.Error{Code: "x", Message: "y"}, r.Attempts[len(r.Attempts)-1].Error)
			require.Nil(t, e.get(t, a.ID).Attempts[0].Error, "an attempt that did not fail has no error")
			require.Equal(t, "cancelled", e.get(t, quiet.ID).Status)
		},
		"a batch of one is a plain finish": func(t *testing.T, e *env) {
			c := e.claimOne(t, "p", longTTL)
			errs := e.s.FinishBatch(e.ctx, e.owner.InstanceID,
				[]cluster.Finishing{{Ref: cluster.Ref{ID: c.ID, Epoch: c.Epoch}, Outcome: cluster.Outcome{Status: "cancelled"}}}, nil)
			require.Len(t, errs, 1)
			require.NoError(t, errs[0])
			require.Equal(t, "cancelled", e.get(t, c.ID).Status)
			require.Empty(t, e.s.FinishBatch(e.ctx, e.owner.InstanceID, nil, nil))
		},
	}
}
