package runs

import "sync"

// Watch tells the followers of a run's log (GET /v1/runs/{id}/logs?follow=1, and through
// it `sluice runs wait` and `--wait`) that the run changed in this process: lines were
// persisted, or the run ended. A follower re-reads the history when told, so it sees the
// end of a run as soon as the finish commits instead of at its next poll; polling stays
// as the fallback for changes made by other cluster members.
//
// Signals are coalesced: a follower's channel holds at most one, which stands for any
// number of changes since it last read. In a cluster, the history's notifications of
// runs ended on other members reach it too (Changed with their id, or "" for several). A follower subscribes BEFORE it reads the
// history, so a change committed between its read and its wait is never missed.
type Watch struct {
	mu   sync.Mutex
	subs map[string]map[chan struct{}]struct{}
}

// NewWatch returns a Watch with no followers.
func NewWatch() *Watch { return &Watch{subs: map[string]map[chan struct{}]struct{}{}} }

// Follow subscribes to run id's changes; stop releases the subscription (call it once
// the follower is done, or the Watch keeps the channel).
func (w *Watch) Follow(id string) (changed <-chan struct{}, stop func()) {
	ch := make(chan struct{}, 1)
	w.mu.Lock()
	set := w.subs[id]
	if set == nil {
		set = map[chan struct{}]struct{}{}
		w.subs[id] = set
	}
	set[ch] = struct{}{}
	w.mu.Unlock()
	var once sync.Once
	return ch, func() {
		once.Do(func() {
			w.mu.Lock()
			defer w.mu.Unlock()
			delete(w.subs[id], ch)
			if len(w.subs[id]) == 0 {
				delete(w.subs, id)
			}
		})
	}
}

// Changed wakes every follower of run id; "" wakes every follower of every run (a
// notification that stood for several runs). It never blocks; a nil Watch does nothing.
func (w *Watch) Changed(id string) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if id == "" {
		for _, set := range w.subs {
			wake(set)
		}
		return
	}
	wake(w.subs[id])
}

func wake(set map[chan struct{}]struct{}) {
	for ch := range set {
		select {
		case ch <- struct{}{}:
		default: // one pending signal already stands for this change
		}
	}
}
