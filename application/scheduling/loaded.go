package scheduling

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultReload is the longest the leader goes on with the schedules it loaded before it
// reads them all again, whatever it heard (a safety net under the change checks).
const DefaultReload = 30 * time.Second

// loadedSchedules is the leader's copy of the schedules, so a pass does not read every
// schedule again. It is read again when this member changed a schedule, another member
// announced a change (NOTIFY), the term is new, a pass left ticks over, the history's
// change stamp (count and newest update of the schedules) moved, or Config.Reload passed.
type loadedSchedules struct {
	mu    sync.Mutex
	list  []*Schedule
	stamp string
	epoch int64
	at    time.Time // when list was read
	// stale is apart from mu, so announcing a change never waits for a read under way.
	stale atomic.Bool
}

// changed marks the copy stale: the next pass reads the schedules again.
func (s *Service) changed() {
	s.loaded.stale.Store(true)
}

// leftOver marks the copy stale after a pass left due ticks undone: their schedules'
// LastTick in the copy would otherwise be wrong.
func (s *Service) leftOver() { s.changed() }

// schedules returns the schedules a pass under epoch works on, read again when the copy
// may be out of date (see loadedSchedules).
func (s *Service) schedules(ctx context.Context, epoch int64) ([]*Schedule, error) {
	c := &s.loaded
	c.mu.Lock()
	defer c.mu.Unlock()
	now := s.deps.Clock()
	fresh := !c.stale.Load() && c.list != nil && c.epoch == epoch && now.Sub(c.at) < s.cfg.Reload && !now.Before(c.at)
	stamp, err := s.deps.Store.SchedulesStamp(ctx)
	if err != nil {
		return nil, err
	}
	if fresh && stamp == c.stamp {
		return c.list, nil
	}
	// stale is cleared before the read: a change announced during it marks it again.
	c.stale.Store(false)
	list, err := s.deps.Store.ListSchedules(ctx)
	if err != nil {
		c.stale.Store(true)
		return nil, err
	}
	c.list, c.stamp, c.epoch, c.at = list, stamp, epoch, now
	s.deps.Log.DebugContext(ctx, "schedules loaded", "schedules", len(list), "epoch", epoch)
	return list, nil
}

// advanced records that a pass recorded every due tick of the plans' schedules: the
// copy's LastTick follows, as a read would show it. After a pass that left ticks over
// the copy is stale and read again instead.
func (s *Service) advanced(plans map[*Schedule]time.Time) {
	s.loaded.mu.Lock()
	defer s.loaded.mu.Unlock()
	for sc, last := range plans {
		if last.After(sc.LastTick) {
			sc.LastTick = last
		}
	}
}
