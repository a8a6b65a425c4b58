package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/sluicehq/sluice/application/cluster"
)

// Defaults of the Config fields whose zero value means "use the default".
const (
	DefaultMinBackoff     = 100 * time.Millisecond
	DefaultMaxBackoff     = 5 * time.Second
	DefaultKeepAlive      = 15 * time.Second
	DefaultConnectTimeout = 10 * time.Second
	// pingTimeout bounds the keep-alive probe of a silent connection.
	pingTimeout = 5 * time.Second
	// applicationName marks the listener's backend in pg_stat_activity.
	applicationName = "sluice-listener"
)

// Config says where to listen.
type Config struct {
	// URL is the PostgreSQL history URL (postgres://… or postgresql://…). Its credentials
	// never appear in a log line or an error.
	URL string
	// WorkChannel and CancelChannel are the channels the store notifies
	// (store.WorkChannel, store.CancelChannel); both are required and must differ.
	WorkChannel   string
	CancelChannel string
	// ScheduleChannel is store.ScheduleChannel: a new or resumed schedule, heard through
	// ScheduleWakeups. Optional; it must differ from the other two.
	ScheduleChannel string
	// DoneChannel is store.DoneChannel: a run that ended, on any member, handed to Done
	// (its id, or "" for several). Optional; it must differ from the others, and needs Done.
	DoneChannel string
	// Done hears the runs that ended (runs.Watch, so log streams end at once). It must not
	// block. After every (re)subscription it is called with "", since what was sent while
	// no connection listened is lost.
	Done func(runID string)
	// Log receives connection losses and recoveries; nil discards them.
	Log *slog.Logger
	// MinBackoff and MaxBackoff bound the wait between reconnect attempts; the wait
	// doubles after each failure and starts over after a successful subscription.
	MinBackoff, MaxBackoff time.Duration
	// KeepAlive is how long the connection may stay silent before it is pinged: a link
	// that died without a reset (a partition, a paused proxy) is otherwise noticed only
	// by the kernel, hours later.
	KeepAlive time.Duration
	// ConnectTimeout bounds one connection attempt unless the URL sets connect_timeout.
	ConnectTimeout time.Duration
}

// Listener holds the dedicated LISTEN connection and hands what it hears to a member
// through Wakeups and Cancels (cluster.Notifications).
type Listener struct {
	cfg    Config
	conn   *pgx.ConnConfig
	log    *slog.Logger
	redact func(string) string

	wake    chan struct{} // capacity 1: one pending wake-up stands for any number
	sched   chan struct{} // the same, for schedule changes
	cancels chan string   // fed by the forwarder from queue
	queue   *cancelQueue

	running atomic.Bool
	pid     atomic.Uint32 // backend pid while subscribed, else 0
	subs    atomic.Int64  // successful subscriptions so far

	mu       sync.Mutex
	stop     context.CancelFunc // set by Start
	stopped  chan struct{}      // closed when the Run that Start began returned
	stopOnce sync.Once
}

var _ cluster.Notifications = (*Listener)(nil)

// New checks cfg and returns a listener that does not connect until Run or Start.
func New(cfg Config) (*Listener, error) {
	redact := redactor(cfg.URL)
	if !strings.HasPrefix(cfg.URL, "postgres://") && !strings.HasPrefix(cfg.URL, "postgresql://") {
		return nil, errors.New("notify: the history URL must be postgres://… or postgresql://… (SQLite and --poll-only use polling only)")
	}
	if cfg.WorkChannel == "" || cfg.CancelChannel == "" {
		return nil, errors.New("notify: WorkChannel and CancelChannel are required (store.WorkChannel, store.CancelChannel)")
	}
	if cfg.WorkChannel == cfg.CancelChannel {
		return nil, fmt.Errorf("notify: the work and cancel channels are both %q; they must differ", cfg.WorkChannel)
	}
	if cfg.ScheduleChannel != "" && (cfg.ScheduleChannel == cfg.WorkChannel || cfg.ScheduleChannel == cfg.CancelChannel) {
		return nil, fmt.Errorf("notify: the schedule channel %q is also the work or cancel channel; they must differ", cfg.ScheduleChannel)
	}
	if cfg.DoneChannel != "" {
		if cfg.Done == nil {
			return nil, errors.New("notify: DoneChannel needs Done")
		}
		if cfg.DoneChannel == cfg.WorkChannel || cfg.DoneChannel == cfg.CancelChannel || cfg.DoneChannel == cfg.ScheduleChannel {
			return nil, fmt.Errorf("notify: the done channel %q is also another channel; they must differ", cfg.DoneChannel)
		}
	}
	conn, err := pgx.ParseConfig(cfg.URL)
	if err != nil {
		return nil, fmt.Errorf("notify: cannot parse the history URL: %s", redact(err.Error()))
	}
	if _, ok := conn.RuntimeParams["application_name"]; !ok {
		conn.RuntimeParams["application_name"] = applicationName
	}
	if cfg.ConnectTimeout <= 0 {
		cfg.ConnectTimeout = DefaultConnectTimeout
	}
	if conn.ConnectTimeout == 0 {
		conn.ConnectTimeout = cfg.ConnectTimeout
	}
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(DefaultMaxBackoff, cfg.MinBackoff)
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = DefaultKeepAlive
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Listener{
		cfg: cfg, conn: conn, log: log.With("component", "listener"), redact: redact,
		wake: make(chan struct{}, 1), sched: make(chan struct{}, 1), cancels: make(chan string), queue: newCancelQueue(),
	}, nil
}

// Wakeups delivers a value when claimable work may have appeared. One pending value
// stands for any number of notifications.
func (l *Listener) Wakeups() <-chan struct{} { return l.wake }

// ScheduleWakeups delivers a value when a schedule was created or resumed (never without
// Config.ScheduleChannel). One pending value stands for any number of notifications.
func (l *Listener) ScheduleWakeups() <-chan struct{} { return l.sched }

// Cancels delivers the id of a run whose cancel flag was set, or "" when the flags of
// every run executing here must be read again (a trailing notification that stood for
// several, a reconnect that may have missed some, a backlog that overflowed).
func (l *Listener) Cancels() <-chan string { return l.cancels }

// Connected reports whether the listener is subscribed right now.
func (l *Listener) Connected() bool { return l.pid.Load() != 0 }

// BackendPID is the PostgreSQL backend of the listening connection, 0 while it is not
// subscribed.
func (l *Listener) BackendPID() uint32 { return l.pid.Load() }

// Subscriptions counts the successful subscriptions so far; more than one means the
// listener reconnected.
func (l *Listener) Subscriptions() int64 { return l.subs.Load() }

// Start runs the listener in the background until Stop.
func (l *Listener) Start() {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	l.mu.Lock()
	if l.stop != nil {
		l.mu.Unlock()
		cancel()
		return
	}
	l.stop, l.stopped = cancel, done
	l.mu.Unlock()
	go func() {
		defer close(done)
		_ = l.Run(ctx)
	}()
}

// Stop ends what Start began and waits for it.
func (l *Listener) Stop() {
	l.mu.Lock()
	stop, done := l.stop, l.stopped
	l.mu.Unlock()
	if stop == nil {
		return
	}
	l.stopOnce.Do(stop)
	<-done
}

// Run listens until ctx ends, reconnecting with backoff whenever the connection is lost.
// It returns nil when ctx ends, and an error at once when another Run is active.
func (l *Listener) Run(ctx context.Context) error {
	if !l.running.CompareAndSwap(false, true) {
		return errors.New("notify: the listener is already running")
	}
	defer l.running.Store(false)

	var fwd sync.WaitGroup
	fctx, stopFwd := context.WithCancel(ctx)
	fwd.Go(func() { l.queue.forward(fctx, l.cancels) })
	defer func() {
		stopFwd()
		fwd.Wait()
	}()

	backoff := l.cfg.MinBackoff
	failures := 0
	for ctx.Err() == nil {
		conn, err := l.subscribe(ctx)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			failures++
			if failures == 1 {
				l.log.Warn("cannot listen for notifications; retrying (polling covers the gap)",
					"error", l.redact(err.Error()))
			} else {
				l.log.Debug("listen attempt failed", "attempt", failures, "error", l.redact(err.Error()))
			}
			if !sleep(ctx, backoff) {
				break
			}
			backoff = min(2*backoff, l.cfg.MaxBackoff)
			continue
		}
		if failures > 0 {
			l.log.Info("listening for notifications again", "after_attempts", failures)
		}
		failures, backoff = 0, l.cfg.MinBackoff
		err = l.receive(ctx, conn)
		l.pid.Store(0)
		closeConn(conn)
		if ctx.Err() == nil {
			failures = 1
			l.log.Warn("the listening connection was lost; reconnecting (polling covers the gap)",
				"error", l.redact(err.Error()))
			if !sleep(ctx, backoff) {
				break
			}
		}
	}
	return nil
}

// subscribe connects and LISTENs on the channels. Whatever was notified while no
// connection listened is lost, so it announces wake-ups and a full cancel check.
func (l *Listener) subscribe(ctx context.Context) (*pgx.Conn, error) {
	conn, err := pgx.ConnectConfig(ctx, l.conn)
	if err != nil {
		return nil, err
	}
	for _, ch := range []string{l.cfg.WorkChannel, l.cfg.CancelChannel, l.cfg.ScheduleChannel, l.cfg.DoneChannel} {
		if ch == "" {
			continue
		}
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			closeConn(conn)
			return nil, fmt.Errorf("LISTEN %s: %w", ch, err)
		}
	}
	l.pid.Store(conn.PgConn().PID())
	l.subs.Add(1)
	l.wakeUp()
	if l.cfg.ScheduleChannel != "" {
		signal(l.sched)
	}
	l.queue.push("")
	if l.cfg.DoneChannel != "" {
		l.cfg.Done("")
	}
	return conn, nil
}

// receive dispatches notifications until the connection fails or ctx ends. A silence of
// KeepAlive is answered by a ping, so a dead link is found within KeepAlive + pingTimeout.
func (l *Listener) receive(ctx context.Context, conn *pgx.Conn) error {
	for {
		wctx, cancel := context.WithTimeout(ctx, l.cfg.KeepAlive)
		n, err := conn.WaitForNotification(wctx)
		silent := wctx.Err() != nil
		cancel()
		if err == nil {
			l.dispatch(n)
			continue
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !silent || conn.IsClosed() {
			return err
		}
		pctx, cancel := context.WithTimeout(ctx, pingTimeout)
		err = conn.Ping(pctx)
		cancel()
		if err != nil {
			return fmt.Errorf("keep-alive ping: %w", err)
		}
	}
}

func (l *Listener) dispatch(n *pgconn.Notification) {
	switch n.Channel {
	case l.cfg.WorkChannel:
		l.wakeUp()
	case l.cfg.CancelChannel:
		l.queue.push(n.Payload)
	case l.cfg.ScheduleChannel:
		signal(l.sched)
	case l.cfg.DoneChannel:
		l.cfg.Done(n.Payload)
	}
}

func (l *Listener) wakeUp() { signal(l.wake) }

// signal leaves one pending value in ch unless one is pending already.
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

func closeConn(conn *pgx.Conn) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = conn.Close(ctx)
}

// sleep waits d or until ctx ends; it reports whether ctx is still alive.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// redactor hides the password of rawURL wherever it appears in a message.
func redactor(rawURL string) func(string) string {
	var pairs []string
	if u, err := url.Parse(rawURL); err == nil {
		if pw, ok := u.User.Password(); ok && pw != "" {
			pairs = append(pairs, pw, "xxxxx")
		}
		if pw := u.Query().Get("password"); pw != "" {
			pairs = append(pairs, pw, "xxxxx")
		}
	}
	if len(pairs) == 0 {
		return func(s string) string { return s }
	}
	return strings.NewReplacer(pairs...).Replace
}
