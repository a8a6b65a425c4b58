package e2e_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/e2e"
)

func TestMemberConfigArgs(t *testing.T) {
	t.Parallel()
	c := e2e.MemberConfig{History: "postgres://db/x", Cluster: true, Token: "tok", Listen: "127.0.0.1:9000",
		DataDir: "/tmp/d", Pools: []string{"gpu", "default"}, LeaseTTLSecs: 5, PollSecs: 1, MaxAttempts: 2,
		PoolWaitSecs: 3, MaxConcurrent: 8, ShutdownGraceSecs: e2e.Secs(0), PollOnly: true, Extra: []string{"--log-level", "debug"}}
	require.Equal(t, []string{"serve", "--cluster", "--history", "postgres://db/x", "--listen", "127.0.0.1:9000",
		"--auth-token", "tok", "--data-dir", "/tmp/d", "--pool", "gpu,default", "--lease-ttl-secs", "5",
		"--cluster-poll-secs", "1", "--cluster-max-attempts", "2", "--pool-wait-timeout-secs", "3",
		"--max-concurrent-runs", "8", "--shutdown-grace-secs", "0", "--poll-only", "--log-level", "debug"}, c.Args())

	minimal := e2e.MemberConfig{Listen: "127.0.0.1:1", Token: "t", DataDir: "/d"}
	require.Equal(t, []string{"serve", "--listen", "127.0.0.1:1", "--auth-token", "t", "--data-dir", "/d"}, minimal.Args(),
		"zero values leave flags out so the defaults apply")
}

func TestOverlapping(t *testing.T) {
	t.Parallel()
	at := func(s int) *time.Time { v := time.Unix(int64(s), 0); return &v }
	a := e2e.Attempt{N: 1, InstanceID: "a", ClaimedAt: at(0), EndedAt: at(10)}
	b := e2e.Attempt{N: 2, InstanceID: "b", ClaimedAt: at(10), EndedAt: at(20)}
	require.Empty(t, e2e.Overlapping([]e2e.Attempt{a, b}), "one ends as the next is claimed")
	c := e2e.Attempt{N: 3, InstanceID: "c", ClaimedAt: at(15)}
	got := e2e.Overlapping([]e2e.Attempt{a, b, c})
	require.Len(t, got, 1)
	require.Equal(t, [2]e2e.Attempt{b, c}, got[0], "an unfinished attempt runs until now")
}

func TestFreeAddr(t *testing.T) {
	t.Parallel()
	require.Regexp(t, `^127\.0\.0\.1:\d+$`, e2e.FreeAddr(t))
}
