package cluster_test

import (
	"sync"
	"testing"
	"time"

	"github.com/sluicehq/sluice/application/cluster"
)

// steps counts one kind of loop step (cluster.Events) so a test can wait for "N more" of
// them: "nothing happened" is then proved by steps the member really took, not by how
// long the test slept.
type steps struct {
	mu      sync.Mutex
	n       int
	changed chan struct{}
}

func newSteps() *steps { return &steps{changed: make(chan struct{})} }

func (s *steps) add() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *steps) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// more waits until n steps after the current count have happened. The deadline only
// ends a test whose loop stopped stepping; it is no measure of speed.
func (s *steps) more(t *testing.T, n int) {
	t.Helper()
	s.reach(t, s.count()+n)
}

// reach waits until total steps have happened since the member started.
func (s *steps) reach(t *testing.T, total int) {
	t.Helper()
	deadline := time.NewTimer(stepDeadline)
	defer deadline.Stop()
	for {
		s.mu.Lock()
		n, ch := s.n, s.changed
		s.mu.Unlock()
		if n >= total {
			return
		}
		select {
		case <-ch:
		case <-deadline.C:
			t.Fatalf("the loop stopped stepping: %d of %d steps after %s", n, total, stepDeadline)
		}
	}
}

// stepDeadline ends a wait for loop steps that will never come.
const stepDeadline = 30 * time.Second

// loopSteps are the counters a harness wires into a member's Events.
type loopSteps struct {
	claims, cycles, checks *steps
}

func newLoopSteps() loopSteps {
	return loopSteps{claims: newSteps(), cycles: newSteps(), checks: newSteps()}
}

func (l loopSteps) events() cluster.Events {
	return cluster.Events{ClaimPass: l.claims.add, LeaseCycle: l.cycles.add, OutageCheck: l.checks.add}
}
