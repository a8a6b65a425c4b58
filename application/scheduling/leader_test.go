package scheduling_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/scheduling"
)

// fakeElector fails its first campaign, then hands out leases; the first lease's
// heartbeat fails.
type fakeElector struct {
	mu        sync.Mutex
	campaigns int
	leases    []*fakeLease
}

type fakeLease struct {
	epoch    int64
	failBeat bool
	mu       sync.Mutex
	beats    int
	resigned int
}

func (l *fakeLease) Epoch() int64 { return l.epoch }
func (l *fakeLease) Heartbeat(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.beats++
	if l.failBeat {
		return errors.New("the history did not answer")
	}
	return nil
}

func (l *fakeLease) Resign(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.resigned++
	return nil
}

func (e *fakeElector) Campaign(context.Context, scheduling.Candidate) (scheduling.Lease, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.campaigns++
	if e.campaigns == 1 {
		return nil, errors.New("no connection")
	}
	l := &fakeLease{epoch: int64(len(e.leases) + 1), failBeat: len(e.leases) == 0}
	e.leases = append(e.leases, l)
	return l, nil
}

func (e *fakeElector) snapshot() []*fakeLease {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]*fakeLease(nil), e.leases...)
}

// The loop survives a failed campaign, gives up a term whose heartbeat fails (resigning
// it), campaigns again, and resigns its term when stopped.
func TestLeaderLoop(t *testing.T) {
	t.Parallel()
	w := sqliteWorld(t)
	w.clock.set(time.Now())
	el := &fakeElector{}
	l := scheduling.NewLeader(w.svc, el, scheduling.LeaderConfig{
		Candidate: scheduling.Candidate{InstanceID: "me", TTL: 3 * time.Second},
		Heartbeat: 20 * time.Millisecond, Poll: 10 * time.Millisecond,
	})
	l.Start()
	require.Eventually(t, func() bool { return len(el.snapshot()) >= 2 }, 30*time.Second, 5*time.Millisecond)
	first := el.snapshot()[0]
	require.Eventually(t, func() bool { first.mu.Lock(); defer first.mu.Unlock(); return first.resigned == 1 },
		30*time.Second, 5*time.Millisecond, "a term whose heartbeat failed is resigned")
	second := el.snapshot()[1]
	require.Eventually(t, func() bool { second.mu.Lock(); defer second.mu.Unlock(); return second.beats >= 2 },
		30*time.Second, 5*time.Millisecond, "the next term is renewed")
	l.Stop()
	l.Stop() // harmless
	second.mu.Lock()
	defer second.mu.Unlock()
	require.Equal(t, 1, second.resigned, "stopping resigns the held term")
	require.Len(t, el.snapshot(), 2, "no campaign while leading")
}
