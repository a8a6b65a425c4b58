package store

import (
	"context"
	"fmt"
	"hash/fnv"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/uptrace/bun"
)

// notifyGap is the least time between two notifications of one channel from one member
// (SPEC §4.3): the first goes at once, inside the transaction that made the change;
// those suppressed after it are folded into one trailing notification.
const notifyGap = 25 * time.Millisecond

// notifier sends PostgreSQL NOTIFY wake-ups for new work and cancel flags.
type notifier struct {
	s        *Store
	channels map[string]*channelState
	mu       sync.Mutex
	stopped  bool
	sending  sync.WaitGroup
}

type channelState struct {
	last  time.Time
	timer *time.Timer // a trailing notification is scheduled
}

var plainSchema = regexp.MustCompile(`^[a-z0-9_]{1,40}$`)

// channelName derives a channel from the schema, so parallel histories (tests) in one
// database never wake each other. Names are lower case and need no quoting in LISTEN.
func channelName(kind, schema string) string {
	if plainSchema.MatchString(schema) {
		return "sluice_" + kind + "_" + schema
	}
	h := fnv.New64a()
	_, _ = h.Write([]byte(schema))
	return fmt.Sprintf("sluice_%s_%x", kind, h.Sum64())
}

// WorkChannel is the NOTIFY channel that announces claimable runs ("" without NOTIFY:
// SQLite, or PollOnly). The payload is empty.
func (s *Store) WorkChannel() string {
	if s.notify == nil {
		return ""
	}
	return channelName("work", s.schema)
}

// CancelChannel is the NOTIFY channel that announces cancel flags ("" without NOTIFY).
// The payload is the run id, or empty for a trailing notification that stands for
// several: then listeners re-read the flags of every run they execute.
func (s *Store) CancelChannel() string {
	if s.notify == nil {
		return ""
	}
	return channelName("cancel", s.schema)
}

// ScheduleChannel is the NOTIFY channel that announces a new or resumed schedule, so
// the scheduler's leader on another member looks again before its next poll ("" without
// NOTIFY). The payload is empty.
func (s *Store) ScheduleChannel() string {
	if s.notify == nil {
		return ""
	}
	return channelName("sched", s.schema)
}

// DoneChannel is the NOTIFY channel that announces runs that ended, so a member
// following a run's log for a client ends the stream at once, whichever member ended
// the run ("" without NOTIFY). The payload is the run id, or empty for a trailing
// notification that stands for several.
func (s *Store) DoneChannel() string {
	if s.notify == nil {
		return ""
	}
	return channelName("done", s.schema)
}

func newNotifier(s *Store) *notifier {
	return &notifier{s: s, channels: map[string]*channelState{}}
}

func (s *Store) notifyWork(ctx context.Context, tx bun.Tx) error {
	if s.notify == nil {
		return nil
	}
	return s.notify.send(ctx, tx, s.WorkChannel(), "")
}

func (s *Store) notifySchedules(ctx context.Context, tx bun.Tx) error {
	if s.notify == nil {
		return nil
	}
	return s.notify.send(ctx, tx, s.ScheduleChannel(), "")
}

func (s *Store) notifyDone(ctx context.Context, tx bun.Tx, runID string) error {
	if s.notify == nil {
		return nil
	}
	return s.notify.send(ctx, tx, s.DoneChannel(), runID)
}

func (s *Store) notifyCancel(ctx context.Context, tx bun.Tx, runID string) error {
	if s.notify == nil {
		return nil
	}
	return s.notify.send(ctx, tx, s.CancelChannel(), runID)
}

// send notifies inside tx when the channel is quiet, so a rollback sends nothing;
// otherwise it schedules one trailing notification. A suppressed notification is never
// lost: it is always covered by a trailing one.
func (n *notifier) send(ctx context.Context, tx bun.Tx, channel, payload string) error {
	n.mu.Lock()
	st := n.channels[channel]
	if st == nil {
		st = &channelState{}
		n.channels[channel] = st
	}
	now := time.Now()
	if st.timer == nil && now.Sub(st.last) >= notifyGap {
		st.last = now
		n.mu.Unlock()
		_, err := tx.ExecContext(ctx, "SELECT pg_notify(?, ?)", channel, payload)
		return err
	}
	n.scheduleLocked(channel, st, now)
	n.mu.Unlock()
	if notes, ok := ctx.Value(txNotesKey{}).(*txNotes); ok && !slices.Contains(notes.channels, channel) {
		notes.channels = append(notes.channels, channel)
	}
	return nil
}

// scheduleLocked schedules the trailing notification of channel unless one is already
// scheduled. n.mu is held.
func (n *notifier) scheduleLocked(channel string, st *channelState, now time.Time) {
	if st.timer == nil && !n.stopped {
		st.timer = time.AfterFunc(max(notifyGap-now.Sub(st.last), 0), func() { n.trailing(channel) })
	}
}

// committed is told the channels a transaction folded into a trailing notification,
// after it committed. A trailing notification still scheduled goes out after this
// commit and covers it; one that already went out may have reached listeners before the
// commit, when they could not see the change yet, so another one is scheduled.
func (n *notifier) committed(channels []string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	now := time.Now()
	for _, ch := range channels {
		n.scheduleLocked(ch, n.channels[ch], now)
	}
}

// txNotes collects, inside one transaction, the channels whose notification it folded
// into a trailing one.
type txNotes struct{ channels []string }

type txNotesKey struct{}

// runInTx is db.RunInTx for transactions that may notify: once one commits, every
// notification it folded into a trailing one is guaranteed to go out after the commit,
// so no listener wakes up too early to see the change and then sleeps a poll interval.
func (s *Store) runInTx(ctx context.Context, fn func(ctx context.Context, tx bun.Tx) error) error {
	if s.notify == nil {
		return s.db.RunInTx(ctx, nil, fn)
	}
	notes := &txNotes{}
	err := s.db.RunInTx(context.WithValue(ctx, txNotesKey{}, notes), nil, fn)
	if err == nil && len(notes.channels) > 0 {
		s.notify.committed(notes.channels)
	}
	return err
}

// trailing sends the notification that stands for those suppressed. A transaction that
// asked for it may commit only after it went out; runInTx schedules another one then.
func (n *notifier) trailing(channel string) {
	n.mu.Lock()
	st := n.channels[channel]
	st.timer = nil
	st.last = time.Now()
	if n.stopped {
		n.mu.Unlock()
		return
	}
	n.sending.Add(1)
	n.mu.Unlock()
	defer n.sending.Done()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := n.s.db.ExecContext(ctx, "SELECT pg_notify(?, '')", channel); err != nil {
		n.s.log.Warn("trailing NOTIFY failed; members fall back to polling", "channel", channel, "error", err)
	}
}

// stop cancels scheduled notifications and waits for one being sent.
func (n *notifier) stop() {
	n.mu.Lock()
	n.stopped = true
	for _, st := range n.channels {
		if st.timer != nil && st.timer.Stop() {
			st.timer = nil
		}
	}
	n.mu.Unlock()
	n.sending.Wait()
}
