package scheduling

import (
	"context"
	"maps"
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
	// notBefore is when a schedule of list is due next, as the last full pass saw it: a
	// pass before then skips it (an in-memory due-time index).
	notBefore map[*Schedule]time.Time
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
	c.list, c.stamp, c.epoch, c.at, c.notBefore = list, stamp, epoch, now, nil
	s.deps.Log.DebugContext(ctx, "schedules loaded", "schedules", len(list), "epoch", epoch)
	return list, nil
}

// pass is what a pass left a schedule at: every due tick up to last recorded, the
// next one due at next.
type pass struct{ last, next time.Time }

// advanced records that a pass recorded every due tick of the schedules it planned: the
// copy's LastTick follows, as a read would show it, and each is not looked at again
// before its next instant. After a pass that left ticks over the copy is stale and
// read again instead.
func (s *Service) advanced(passes map[*Schedule]pass) {
	s.loaded.mu.Lock()
	defer s.loaded.mu.Unlock()
	if s.loaded.notBefore == nil {
		s.loaded.notBefore = make(map[*Schedule]time.Time, len(passes))
	}
	for sc, p := range passes {
		if p.last.After(sc.LastTick) {
			sc.LastTick = p.last
		}
		if p.next.IsZero() {
			delete(s.loaded.notBefore, sc)
		} else {
			s.loaded.notBefore[sc] = p.next
		}
	}
}

// notBefore is a copy of the due-time index of the loaded schedules.
func (s *Service) notBefore() map[*Schedule]time.Time {
	s.loaded.mu.Lock()
	defer s.loaded.mu.Unlock()
	return maps.Clone(s.loaded.notBefore)
}
