package run_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/run"
)

var all = []run.Status{
	run.StatusNew, run.Queued, run.Pending, run.Running, run.Sharded,
	run.Completed, run.Failed, run.Cancelled,
}

// allowed is SPEC §3 written out again by hand, so a change to the table in the code
// must be made twice to pass.
var allowed = map[[2]run.Status]bool{
	{run.StatusNew, run.Pending}: true,
	{run.StatusNew, run.Queued}:  true,
	{run.Queued, run.Pending}:    true,
	{run.Queued, run.Cancelled}:  true,
	{run.Pending, run.Running}:   true,
	{run.Pending, run.Cancelled}: true,
	{run.Pending, run.Failed}:    true,
	{run.Running, run.Completed}: true,
	{run.Running, run.Failed}:    true,
	{run.Running, run.Cancelled}: true,
	{run.Running, run.Pending}:   true,
	{run.Running, run.Sharded}:   true,
	{run.Sharded, run.Completed}: true,
	{run.Sharded, run.Failed}:    true,
	{run.Sharded, run.Cancelled}: true,
}

func TestTransitionEveryPair(t *testing.T) {
	t.Parallel()
	for _, from := range all {
		for _, to := range all {
			want := allowed[[2]run.Status{from, to}]
			t.Run(string(from)+"->"+string(to), func(t *testing.T) {
				t.Parallel()
				require.Equal(t, want, run.CanTransition(from, to))

				r := run.Rehydrate(run.Snapshot{ID: "r1", Status: from})
				err := r.Transition(to)
				if want {
					require.NoError(t, err)
					require.Equal(t, to, r.Status())
					return
				}
				require.ErrorIs(t, err, run.ErrInvalidTransition)
				var te *run.TransitionError
				require.ErrorAs(t, err, &te)
				require.Equal(t, from, te.From)
				require.Equal(t, to, te.To)
				require.Equal(t, from, r.Status(), "a refused transition leaves the status alone")
				require.Contains(t, err.Error(), "from "+string(from)+" to "+string(to))
			})
		}
	}
}

func TestTerminalAndActive(t *testing.T) {
	t.Parallel()
	terminal := map[run.Status]bool{run.Completed: true, run.Failed: true, run.Cancelled: true}
	active := map[run.Status]bool{run.Pending: true, run.Running: true, run.Sharded: true}
	for _, s := range all {
		require.Equal(t, terminal[s], s.Terminal(), s)
		require.Equal(t, active[s], s.Active(), s)
		// A terminal status has no way out; every other stored status has one.
		require.Equal(t, terminal[s], !hasExit(s), s)
	}
}

func hasExit(s run.Status) bool {
	for _, to := range all {
		if run.CanTransition(s, to) {
			return true
		}
	}
	return false
}

func TestParseStatus(t *testing.T) {
	t.Parallel()
	for _, s := range run.Statuses() {
		got, err := run.ParseStatus(string(s))
		require.NoError(t, err)
		require.Equal(t, s, got)
	}
	require.Len(t, run.Statuses(), 7)
	for _, bad := range []string{"", "new", "Running", "done", " pending"} {
		_, err := run.ParseStatus(bad)
		require.Error(t, err, bad)
		require.ErrorContains(t, err, "use one of queued, pending, running, sharded, completed, failed, cancelled")
	}
}

func TestTriggerKinds(t *testing.T) {
	t.Parallel()
	want := []string{"api", "cli", "mcp", "template", "tenant", "fanout", "schedule", "backfill", "rollback", "approval"}
	got := run.TriggerKinds()
	require.Len(t, got, len(want))
	for i, k := range got {
		require.Equal(t, want[i], string(k))
		parsed, err := run.ParseTriggerKind(want[i])
		require.NoError(t, err)
		require.Equal(t, k, parsed)
	}
	_, err := run.ParseTriggerKind("cron")
	require.ErrorContains(t, err, `trigger_kind "cron" is not known`)
}

func TestErrorCodes(t *testing.T) {
	t.Parallel()
	want := []string{
		"pipeline_error", "config_error", "vault_key_missing", "vault_tampered", "timeout",
		"poisoned", "pool_unavailable", "lease_lost", "shard_failed", "shard_key_invalid",
		"path_refused", "host_refused", "history_refused",
	}
	got := run.Codes()
	require.Len(t, got, len(want))
	for i, c := range got {
		require.Equal(t, want[i], string(c))
		require.True(t, c.Valid())
	}
	require.False(t, run.ErrorCode("oops").Valid())

	var err error = &run.Error{Code: run.CodeTimeout, Message: "ran longer than timeout_secs (60)"}
	var re *run.Error
	require.ErrorAs(t, err, &re)
	require.Equal(t, "timeout: ran longer than timeout_secs (60)", err.Error())
	require.Equal(t, "timeout", (&run.Error{Code: run.CodeTimeout}).Error())
}

func TestSentinelsAreDistinct(t *testing.T) {
	t.Parallel()
	s := []error{run.ErrNotFound, run.ErrConflict, run.ErrLeaseLost, run.ErrInvalidTransition}
	for i := range s {
		for j := range s {
			require.Equal(t, i == j, errors.Is(s[i], s[j]))
		}
	}
}
