package scheduling

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/sluicehq/sluice/domain/run"
)

// Defaults of the leader loop (SPEC §9.3).
const (
	DefaultLeaderTTL     = 30 * time.Second
	DefaultHeartbeat     = 5 * time.Second
	DefaultLeaderPoll    = time.Second
	resignTimeout        = 5 * time.Second
	heartbeatTimeoutPart = 3 // a heartbeat may take a third of the TTL
)

// LeaderConfig tunes Leader.
type LeaderConfig struct {
	Candidate Candidate
	// Heartbeat is how often the term is renewed (default 5 s, at most a third of the TTL).
	Heartbeat time.Duration
	// Poll is how often a standby campaigns and the leader re-reads the schedules while
	// no tick is due sooner (default 1 s).
	Poll time.Duration
	// Wake delivers a value when another member changed a schedule (a PostgreSQL LISTEN
	// wake-up), so the leader reads the schedules again and looks before its poll; nil:
	// the poll, the schedules' change stamp and this member's own changes only.
	Wake <-chan struct{}
}

// Leader runs the scheduler: it campaigns until it leads, then handles due ticks
// until its term is lost or it is stopped, sleeping until the next due instant, a
// wake-up or the poll interval. Exactly one member in a history leads at a time; its
// heartbeat runs apart from the passes, so a long catch-up does not let the term lapse.
type Leader struct {
	svc  *Service
	el   Elector
	cfg  LeaderConfig
	stop context.CancelFunc
	done chan struct{}
	mu   sync.Mutex
}

// NewLeader returns a stopped leader loop.
func NewLeader(svc *Service, el Elector, cfg LeaderConfig) *Leader {
	if cfg.Candidate.TTL <= 0 {
		cfg.Candidate.TTL = DefaultLeaderTTL
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = min(DefaultHeartbeat, cfg.Candidate.TTL/3)
	}
	if cfg.Poll <= 0 {
		cfg.Poll = DefaultLeaderPoll
	}
	return &Leader{svc: svc, el: el, cfg: cfg}
}

// Start begins the loop in the background.
func (l *Leader) Start() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stop != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	l.stop, l.done = cancel, make(chan struct{})
	go func() {
		defer close(l.done)
		l.run(ctx)
	}()
}

// Stop ends the loop and resigns a held term (a clean stop); it returns once the loop
// has ended. Draining servers stop it first, so a standby takes over at once.
func (l *Leader) Stop() {
	l.mu.Lock()
	stop, done := l.stop, l.done
	l.mu.Unlock()
	if stop == nil {
		return
	}
	stop()
	<-done
}

func (l *Leader) run(ctx context.Context) {
	log := l.svc.deps.Log
	for ctx.Err() == nil {
		lease, err := l.el.Campaign(ctx, l.cfg.Candidate)
		switch {
		case err != nil:
			if ctx.Err() == nil {
				log.WarnContext(ctx, "scheduler campaign failed; retrying", "error", err.Error())
			}
		case lease != nil:
			// The server's logger already names this member's instance_id.
			log.InfoContext(ctx, "leading the scheduler", "epoch", lease.Epoch())
			l.lead(ctx, lease)
			rctx, cancel := context.WithTimeout(context.Background(), resignTimeout)
			if err := lease.Resign(rctx); err != nil {
				log.Warn("resigning the scheduler term failed; its lock ends with the connection", "epoch", lease.Epoch(), "error", err.Error())
			}
			cancel()
			log.Info("stopped leading the scheduler", "epoch", lease.Epoch())
		}
		if ok, _ := sleep(ctx, l.cfg.Poll, nil, nil); !ok {
			return
		}
	}
}

// lead handles ticks under one term until the term is lost or ctx ends.
func (l *Leader) lead(ctx context.Context, lease Lease) {
	log := l.svc.deps.Log
	tctx, lost := context.WithCancel(ctx)
	defer lost()
	go func() {
		defer lost()
		for {
			if ok, _ := sleep(tctx, l.cfg.Heartbeat, nil, nil); !ok {
				return
			}
			hctx, cancel := context.WithTimeout(tctx, l.cfg.Candidate.TTL/heartbeatTimeoutPart)
			err := lease.Heartbeat(hctx)
			cancel()
			if err != nil {
				if tctx.Err() == nil {
					log.Warn("scheduler heartbeat failed; giving up the term", "epoch", lease.Epoch(), "error", err.Error())
				}
				return
			}
		}
	}()
	for tctx.Err() == nil {
		next, err := l.svc.Pass(tctx, lease.Epoch())
		switch {
		case errors.Is(err, run.ErrLeaseLost):
			log.Warn("another member took over the scheduler", "epoch", lease.Epoch())
			return
		case err != nil && tctx.Err() == nil:
			log.Warn("scheduler pass failed; retrying", "error", err.Error())
		}
		wait := l.cfg.Poll
		if !next.IsZero() {
			wait = min(wait, time.Until(next))
		}
		if !l.wait(tctx, wait) {
			return
		}
	}
}

// wait sleeps until the next pass: d, this member's change (Service.Wake) or another
// member's announced one (cfg.Wake), after which the schedules are read again; false
// when ctx ended.
func (l *Leader) wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	ok, announced := sleep(ctx, d, l.svc.wake, l.cfg.Wake)
	if announced {
		l.svc.changed()
	}
	return ok
}

// sleep waits d, or until wake or notified fires (a nil channel never does); ok is false
// when ctx ended, notified tells that notified fired.
func sleep(ctx context.Context, d time.Duration, wake, notified <-chan struct{}) (ok, announced bool) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false, false
	case <-t.C:
	case <-wake:
	case <-notified:
		return true, true
	}
	return true, false
}
