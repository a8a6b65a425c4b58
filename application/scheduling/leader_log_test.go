package scheduling_test

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/scheduling"
)

type lockedLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedLog) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedLog) lineWith(msg string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range strings.Split(b.buf.String(), "\n") {
		if strings.Contains(l, `"msg":"`+msg+`"`) {
			return l
		}
	}
	return ""
}

// The server's logger already names the member; the leader's line must not name it twice.
func TestLeadingLineNamesTheInstanceOnce(t *testing.T) {
	t.Parallel()
	w := sqliteWorld(t)
	w.clock.set(time.Now())
	logs := &lockedLog{}
	svc := scheduling.New(scheduling.Deps{Store: w.st, Templates: w.tpl, Clock: w.clock.Now,
		Log: slog.New(slog.NewJSONHandler(logs, nil)).With("instance_id", "me")}, scheduling.Config{})
	l := scheduling.NewLeader(svc, &fakeElector{}, scheduling.LeaderConfig{
		Candidate: scheduling.Candidate{InstanceID: "me", TTL: 3 * time.Second},
		Heartbeat: 20 * time.Millisecond, Poll: 10 * time.Millisecond,
	})
	l.Start()
	t.Cleanup(l.Stop)
	var line string
	require.Eventually(t, func() bool { line = logs.lineWith("leading the scheduler"); return line != "" },
		5*time.Second, 5*time.Millisecond)
	require.Equal(t, 1, strings.Count(line, `"instance_id"`), line)
}
