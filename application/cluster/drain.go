package cluster

import (
	"context"
	"errors"
	"fmt"
)

// Causes a run's token is fired with. The worker reads the cause to decide how the run
// ends: a requested cancel ends it cancelled, a drain or an outage hands it back, a lost
// lease discards its result.
var (
	errCancelRequested = errors.New("cancel requested")
	errDraining        = errors.New("member is shutting down")
	errOutage          = errors.New("history unreachable past the outage cutoff")
)

// Drain is the graceful shutdown of SPEC §2.8: stop claiming (the membership row says
// draining), let what executes finish for ShutdownGrace, then stop the rest at a page
// boundary and hand each back as pending without spending an attempt, and wait at most
// ShutdownKill more before abandoning what still runs (its lease will expire). A second
// Drain, or ctx ending, skips what is left of the grace; the kill wait still applies.
// Every caller returns when the drain is over.
func (m *Member) Drain(ctx context.Context) error {
	m.mu.Lock()
	if m.drainDone != nil {
		done := m.drainDone
		m.mu.Unlock()
		m.skipOnce.Do(func() { close(m.skipGrace) })
		<-done
		m.mu.Lock()
		defer m.mu.Unlock()
		return m.drainErr
	}
	done := make(chan struct{})
	m.drainDone = done
	m.draining = true
	started := m.started
	m.mu.Unlock()

	err := m.drain(ctx, started)
	m.mu.Lock()
	m.drainErr = err
	m.mu.Unlock()
	close(done)
	return err
}

func (m *Member) drain(ctx context.Context, started bool) error {
	m.stopClaiming()
	if !started {
		return nil
	}
	<-m.claimDone // nothing is launched after this
	m.log.Info("draining: claiming stopped", "in_flight", m.InFlight(), "grace", m.cfg.ShutdownGrace.String())
	m.heartbeatNow()

	skip := make(chan struct{})
	stopWatch := make(chan struct{})
	defer close(stopWatch)
	go func() {
		select {
		case <-ctx.Done():
		case <-m.skipGrace:
		case <-stopWatch:
			return
		}
		close(skip)
	}()
	if m.waitIdle(m.cfg.ShutdownGrace, skip) {
		return nil
	}
	n := m.InFlight()
	m.log.Info("draining: grace over; stopping runs to hand them back", "in_flight", n)
	m.stopAll(errDraining)
	if m.waitIdle(m.cfg.ShutdownKill, nil) {
		return nil
	}
	left := m.InFlight()
	m.log.Warn("draining: runs still executing after the kill timeout are abandoned; their leases will expire",
		"abandoned", left)
	return fmt.Errorf("cluster: %d run(s) did not stop within --shutdown-kill-secs (%s) and were abandoned",
		left, m.cfg.ShutdownKill)
}

// heartbeatNow tells peers at once that this member drains, so they stop counting it.
func (m *Member) heartbeatNow() {
	ctx, cancel := m.stmt(m.root)
	defer cancel()
	if err := m.deps.Store.Heartbeat(ctx, m.memberRow()); err != nil {
		m.log.Warn("draining heartbeat failed", "error", m.redact(err.Error()))
	}
}
