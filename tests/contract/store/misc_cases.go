package storecontract

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/store"
	"github.com/sluicehq/sluice/application/cluster"
	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/state"
)

func logLines(n int, msg string) []cluster.LogLine {
	out := make([]cluster.LogLine, n)
	for i := range out {
		out[i] = cluster.LogLine{At: time.Now(), Level: "INFO", Message: fmt.Sprintf("%s %d", msg, i)}
	}
	return out
}

func miscCases() map[string]func(*testing.T, *env) {
	return map[string]func(*testing.T, *env){
		"logs keep order and attributes and page by seq": func(t *testing.T, e *env) {
			r := e.create(t, rec("p"))
			require.NoError(t, e.s.AppendLogs(e.ctx, r.ID, []cluster.LogLine{
				{At: time.Now(), Level: "INFO", Message: "started", Attrs: map[string]any{"pages": float64(0)}},
				{At: time.Now(), Level: "ERROR", Message: "boom"},
			}))
			require.NoError(t, e.s.AppendLogs(e.ctx, r.ID, logLines(3, "more")))
			all, err := e.s.Logs(e.ctx, r.ID, 0, 100)
			require.NoError(t, err)
			require.Len(t, all, 5)
			for i, l := range all {
				require.Equal(t, int64(i+1), l.Seq)
			}
			require.Equal(t, map[string]any{"pages": float64(0)}, all[0].Attrs)
			require.Equal(t, "ERROR", all[1].Level)
			page, err := e.s.Logs(e.ctx, r.ID, 2, 2)
			require.NoError(t, err)
			require.Equal(t, []int64{3, 4}, []int64{page[0].Seq, page[1].Seq})
			empty, err := e.s.Logs(e.ctx, r.ID, 5, 10)
			require.NoError(t, err)
			require.Empty(t, empty)
			require.ErrorIs(t, e.s.AppendLogs(e.ctx, "missing", logLines(1, "x")), run.ErrNotFound)
		},
		"finish writes the run's last log lines after the earlier ones, and a lost lease none": func(t *testing.T, e *env) {
			c := e.claimOne(t, "p", longTTL)
			require.NoError(t, e.s.AppendLogs(e.ctx, c.ID, logLines(2, "early")))
			require.NoError(t, e.s.Finish(e.ctx, e.owner.InstanceID, cluster.Ref{ID: c.ID, Epoch: c.Epoch},
				cluster.Outcome{Status: "completed", Logs: logLines(2, "last")}, nil))
			all := readAllLogs(t, e, c.ID)
			var msgs []string
			for _, l := range all {
				msgs = append(msgs, l.Message)
			}
			require.Equal(t, []string{"early 0", "early 1", "last 0", "last 1"}, msgs)
			require.Equal(t, 4, e.get(t, c.ID).LogLines)

			stale := e.claimOne(t, "q", longTTL)
			err := e.s.Finish(e.ctx, e.owner.InstanceID, cluster.Ref{ID: stale.ID, Epoch: stale.Epoch + 1},
				cluster.Outcome{Status: "completed", Logs: logLines(1, "ghost")}, nil)
			require.ErrorIs(t, err, run.ErrLeaseLost)
			require.Empty(t, readAllLogs(t, e, stale.ID), "nothing of a fenced-out finish is written")
		},
		"logs stop at 10,000 lines with one truncation marker": func(t *testing.T, e *env) {
			r := e.create(t, rec("p"))
			require.NoError(t, e.s.AppendLogs(e.ctx, r.ID, logLines(9_998, "line")))
			require.NoError(t, e.s.AppendLogs(e.ctx, r.ID, logLines(5, "tail")))
			require.NoError(t, e.s.AppendLogs(e.ctx, r.ID, logLines(5, "after")))
			all := readAllLogs(t, e, r.ID)
			require.Len(t, all, 10_001)
			last := all[len(all)-1]
			require.Equal(t, "WARN", last.Level)
			require.True(t, strings.HasPrefix(last.Message, "log truncated: "), last.Message)
			require.Equal(t, "tail 1", all[9_999].Message)
			got := e.get(t, r.ID)
			require.Equal(t, 10_001, got.LogLines)
		},
		"finish caps its last log lines too, and a capped log takes no more": func(t *testing.T, e *env) {
			c := e.claimOne(t, "p", longTTL)
			require.NoError(t, e.s.AppendLogs(e.ctx, c.ID, logLines(9_998, "line")))
			require.NoError(t, e.s.Finish(e.ctx, e.owner.InstanceID, cluster.Ref{ID: c.ID, Epoch: c.Epoch},
				cluster.Outcome{Status: "completed", Logs: logLines(5, "tail"), Tenant: "", Name: "p"}, nil))
			all := readAllLogs(t, e, c.ID)
			require.Len(t, all, 10_001, "two tail lines fit, then the marker")
			require.Equal(t, "tail 1", all[9_999].Message)
			require.True(t, strings.HasPrefix(all[10_000].Message, "log truncated: "), all[10_000].Message)
			got := e.get(t, c.ID)
			require.Equal(t, 10_001, got.LogLines, "the counters Finish moved by 5 lines were corrected")
			require.True(t, got.LogTruncated)
			var bytes int64
			for _, l := range all {
				bytes += int64(len(l.Message) + 2) // attrs "{}"
			}
			require.Equal(t, bytes, got.LogBytes)

			capped := e.claimOne(t, "q", longTTL)
			big := strings.Repeat("x", 100_000)
			for range 11 {
				require.NoError(t, e.s.AppendLogs(e.ctx, capped.ID, []cluster.LogLine{{At: time.Now(), Level: "INFO", Message: big}}))
			}
			before := e.get(t, capped.ID)
			require.True(t, before.LogTruncated)
			require.NoError(t, e.s.Finish(e.ctx, e.owner.InstanceID, cluster.Ref{ID: capped.ID, Epoch: capped.Epoch},
				cluster.Outcome{Status: "failed", ErrorCode: "x", ErrorMessage: "y", Logs: logLines(1, "late")}, nil))
			after := e.get(t, capped.ID)
			require.Equal(t, before.LogLines, after.LogLines, "a truncated log's counters stay")
			require.Equal(t, before.LogBytes, after.LogBytes)
			require.Len(t, readAllLogs(t, e, capped.ID), before.LogLines)
			require.Equal(t, "failed", after.Status)
		},
		"logs stop at 1 MiB with one truncation marker": func(t *testing.T, e *env) {
			r := e.create(t, rec("p"))
			big := strings.Repeat("x", 100_000)
			for range 12 {
				require.NoError(t, e.s.AppendLogs(e.ctx, r.ID, []cluster.LogLine{{At: time.Now(), Level: "INFO", Message: big}}))
			}
			all := readAllLogs(t, e, r.ID)
			require.Len(t, all, 11, "10 lines of 100 kB fit in 1 MiB, then the marker")
			require.True(t, strings.HasPrefix(all[10].Message, "log truncated: "))
			var markers int
			for _, l := range all {
				if strings.HasPrefix(l.Message, "log truncated: ") {
					markers++
				}
			}
			require.Equal(t, 1, markers)
		},
		"purge deletes old terminal runs, old keys and dead members": func(t *testing.T, e *env) {
			done := e.create(t, rec("p", func(r *runs.Record) { r.Labels = map[string]string{"k": "v"} }))
			_, err := e.s.Create(e.ctx, rec("p"), &runs.Idempotency{Scope: "s", Key: "k", Fingerprint: "f"})
			require.NoError(t, err)
			require.NoError(t, e.s.AppendLogs(e.ctx, done.ID, logLines(2, "x")))
			_, _, err = e.s.CancelQueued(e.ctx, done.ID, nil)
			require.NoError(t, err)
			running := e.claimOne(t, "q", longTTL, func(r *runs.Record) { r.Pool = "gpu" })
			require.NoError(t, e.s.Heartbeat(e.ctx, cluster.MemberRow{InstanceID: "dead", Host: "h", PID: 1, Version: "v"}))

			purged, err := e.s.Purge(e.ctx, purgeBefore(time.Now().Add(-time.Hour)))
			require.NoError(t, err)
			require.Zero(t, purged.Runs, "nothing is old enough yet")

			purged, err = e.s.Purge(e.ctx, purgeBefore(time.Now().Add(time.Hour)))
			require.NoError(t, err)
			require.Equal(t, 1, purged.Runs)
			_, err = e.s.Get(e.ctx, done.ID)
			require.ErrorIs(t, err, run.ErrNotFound)
			require.Equal(t, "running", e.get(t, running.ID).Status, "active runs stay")
			res, err := e.s.Create(e.ctx, rec("p"), &runs.Idempotency{Scope: "s", Key: "k", Fingerprint: "f"})
			require.NoError(t, err)
			require.True(t, res.Created, "the purged key is free again")
			members, err := e.s.Members(e.ctx)
			require.NoError(t, err)
			require.Empty(t, members)
			page, err := e.s.List(e.ctx, runs.Filter{Labels: map[string]string{"k": "v"}})
			require.NoError(t, err)
			require.Empty(t, page)
		},
		"state load and save": func(t *testing.T, e *env) {
			b, err := e.s.Load(e.ctx, "acme/orders")
			require.NoError(t, err)
			require.Nil(t, b)
			require.NoError(t, e.s.Save(e.ctx, "acme/orders", state.Bookmark{Cursor: "id", Value: int64(41)}))
			require.NoError(t, e.s.Save(e.ctx, "acme/orders", state.Bookmark{Cursor: "id", Value: int64(42)}))
			b, err = e.s.Load(e.ctx, "acme/orders")
			require.NoError(t, err)
			require.Equal(t, &state.Bookmark{Cursor: "id", Value: int64(42)}, b)
			require.NoError(t, e.s.SaveFormat(e.ctx, "_/bare", state.Bookmark{Cursor: "ts", Value: "2026-01-01T00:00:00Z"}, state.FormatBare))
			b, err = e.s.Load(e.ctx, "_/bare")
			require.NoError(t, err)
			require.Equal(t, &state.Bookmark{Value: "2026-01-01T00:00:00Z"}, b, "a bare bookmark has no cursor name")
			require.Error(t, e.s.SaveFormat(e.ctx, "x", state.Bookmark{}, 9))
		},
		"members heartbeat, read back and stop": func(t *testing.T, e *env) {
			m := cluster.MemberRow{InstanceID: "i-1", Host: "host-1", PID: 42, Listen: "127.0.0.1:8080", Version: "1.0",
				Pools: []string{"default", "gpu"}, MaxConcurrent: 4, InFlight: 1, StateFormatMax: 2, VaultFormatMax: 1,
				StartedAt: time.Now().Add(-time.Minute).UTC().Truncate(time.Millisecond)}
			require.NoError(t, e.s.Heartbeat(e.ctx, m))
			old := cluster.MemberRow{InstanceID: "i-0", Host: "h", PID: 1, Version: "0.9", StartedAt: m.StartedAt}
			require.NoError(t, e.s.Heartbeat(e.ctx, old))
			m.InFlight, m.Draining = 2, true
			require.NoError(t, e.s.Heartbeat(e.ctx, m))
			require.NoError(t, e.s.MarkStopped(e.ctx, "i-0"))
			got, err := e.s.Members(e.ctx)
			require.NoError(t, err)
			require.Len(t, got, 2)
			require.Equal(t, old.InstanceID, got[0].InstanceID)
			require.Nil(t, got[0].Pools, "no pools stored means no pool support")
			require.False(t, got[0].StoppedAt.IsZero())
			require.Equal(t, m, got[1].MemberRow)
			require.True(t, got[1].StoppedAt.IsZero())
			require.Less(t, got[1].Age, 10*time.Second)
			require.WithinDuration(t, time.Now(), got[1].HeartbeatAt, 10*time.Second)
			now, err := e.s.Now(e.ctx)
			require.NoError(t, err)
			require.WithinDuration(t, time.Now(), now, 10*time.Second)
			require.NoError(t, e.s.Ping(e.ctx))
		},
		"audit appends and pages": func(t *testing.T, e *env) {
			for i := range 3 {
				require.NoError(t, e.s.Audit(e.ctx, runs.AuditEntry{Actor: "alice", Action: fmt.Sprintf("run.cancel.%d", i),
					RunID: "r-1", Details: map[string]any{"i": float64(i)}}))
			}
			first, err := e.s.ListAudit(e.ctx, 0, 2)
			require.NoError(t, err)
			require.Len(t, first, 2)
			require.Equal(t, "run.cancel.0", first[0].Action)
			require.Equal(t, map[string]any{"i": float64(0)}, first[0].Details)
			require.False(t, first[0].At.IsZero())
			rest, err := e.s.ListAudit(e.ctx, first[1].Seq, 10)
			require.NoError(t, err)
			require.Len(t, rest, 1)
			require.Equal(t, "run.cancel.2", rest[0].Action)
			require.Equal(t, "r-1", rest[0].RunID)
		},
		"a run's audit entry commits with it, with the stored status, and not on a replay": func(t *testing.T, e *env) {
			entry := func() *runs.AuditEntry {
				return &runs.AuditEntry{Actor: "alice", Action: runs.ActionSubmitted, Details: map[string]any{"name": "s"}}
			}
			idem := &runs.Idempotency{Scope: "acme", Key: "k-audit", Fingerprint: "fp"}
			first := rec("s", func(r *runs.Record) { r.Serial = true; r.Audit = entry() })
			first.Audit.RunID = first.ID
			res, err := e.s.Create(e.ctx, first, idem)
			require.NoError(t, err)
			require.True(t, res.Created)
			second := rec("s", func(r *runs.Record) { r.Serial = true; r.Audit = entry() })
			second.Audit.RunID = second.ID
			e.create(t, second) // queued behind the first
			replay := rec("s", func(r *runs.Record) { r.Audit = entry() })
			res, err = e.s.Create(e.ctx, replay, idem)
			require.NoError(t, err)
			require.False(t, res.Created)

			got, err := e.s.ListAudit(e.ctx, 0, 10)
			require.NoError(t, err)
			require.Len(t, got, 2, "the replay's rolled-back transaction wrote no entry")
			require.Equal(t, first.ID, got[0].RunID)
			require.Equal(t, map[string]any{"name": "s", "status": "pending"}, got[0].Details)
			require.Equal(t, "alice", got[0].Actor)
			require.Equal(t, second.ID, got[1].RunID)
			require.Equal(t, "queued", got[1].Details["status"])
		},
		"the exclusive lock refuses a second server and names the holder": func(t *testing.T, e *env) {
			holder := store.Holder{InstanceID: "inst-1", Host: "host-a", PID: 4242}
			release, err := e.s.AcquireExclusive(e.ctx, holder)
			require.NoError(t, err)
			if !e.h.Shared {
				again, err := e.s.AcquireExclusive(e.ctx, store.Holder{InstanceID: "inst-2"})
				require.NoError(t, err, "a memory history is private to its process: no lock")
				again()
				release()
				return
			}
			second := e.open(t, store.Options{})
			_, err = second.AcquireExclusive(e.ctx, store.Holder{InstanceID: "inst-2", Host: "host-b", PID: 7})
			var locked *store.LockedError
			require.ErrorAs(t, err, &locked)
			require.ErrorIs(t, err, store.ErrLocked)
			require.Equal(t, holder, locked.Holder)
			for _, want := range []string{"inst-1", "host-a", "4242"} {
				require.Contains(t, err.Error(), want)
			}
			release()
			release() // twice is harmless
			release2, err := second.AcquireExclusive(e.ctx, store.Holder{InstanceID: "inst-2", Host: "host-b", PID: 7})
			require.NoError(t, err)
			_, err = e.s.AcquireExclusive(e.ctx, holder)
			require.ErrorAs(t, err, &locked)
			require.Equal(t, "inst-2", locked.Holder.InstanceID)
			release2()
		},
	}
}

func readAllLogs(t *testing.T, e *env, id string) []runs.LogLine {
	t.Helper()
	var all []runs.LogLine
	after := int64(0)
	for {
		page, err := e.s.Logs(e.ctx, id, after, 5000)
		require.NoError(t, err)
		if len(page) == 0 {
			return all
		}
		all = append(all, page...)
		after = page[len(page)-1].Seq
	}
}
