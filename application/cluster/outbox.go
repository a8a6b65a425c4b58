package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/application/runs"
)

// Callback delivery rules (SPEC §2.5).
const (
	CallbackTimeout    = 10 * time.Second
	CallbackBackoffMin = time.Second
	CallbackBackoffMax = 5 * time.Minute
	CallbackRetryFor   = 24 * time.Hour
)

// outboxBatch is how many callbacks one claim takes; small, because each may wait the
// full timeout and the claim's lease must outlast sending them all.
const outboxBatch = 8

// outboxLease is long enough for a whole batch to time out one by one.
const outboxLease = outboxBatch*CallbackTimeout + 30*time.Second

// Verdict is what becomes of a callback after one delivery attempt.
type Verdict int

const (
	// Delivered: a 2xx answer; the outbox row is deleted.
	Delivered Verdict = iota
	// Rejected: a final answer (4xx other than 408 and 429) or an address the policy
	// refuses; the row is deleted and the failure logged.
	Rejected
	// Retry: try again at Next.
	Retry
	// Expired: retried for CallbackRetryFor without success; the row is deleted.
	Expired
)

func (v Verdict) String() string {
	switch v {
	case Delivered:
		return "delivered"
	case Rejected:
		return "rejected"
	case Retry:
		return "retry"
	case Expired:
		return "expired"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// Decision is the verdict of one delivery attempt and, for Retry, when to try again.
type Decision struct {
	Verdict Verdict
	Next    time.Time
}

// Decide judges one delivery attempt. attempts counts the earlier attempts of this
// callback; the wait after a failure starts at CallbackBackoffMin and doubles up to
// CallbackBackoffMax. Retries stop CallbackRetryFor after createdAt: the last one is
// scheduled at that instant at the latest, and a failure at or after it expires.
func Decide(status int, err error, attempts int, createdAt, now time.Time) Decision {
	switch {
	case err == nil && status >= 200 && status < 300:
		return Decision{Verdict: Delivered}
	case errors.Is(err, ErrUndeliverable):
		return Decision{Verdict: Rejected}
	case err == nil && status >= 400 && status < 500 && status != 408 && status != 429:
		return Decision{Verdict: Rejected}
	}
	deadline := createdAt.Add(CallbackRetryFor)
	if !now.Before(deadline) {
		return Decision{Verdict: Expired}
	}
	next := now.Add(Backoff(attempts))
	if next.After(deadline) {
		next = deadline
	}
	return Decision{Verdict: Retry, Next: next}
}

// Backoff is the wait after the failure of attempt number attempts+1.
func Backoff(attempts int) time.Duration {
	d := CallbackBackoffMin
	for i := 0; i < attempts && d < CallbackBackoffMax; i++ {
		d *= 2
	}
	return min(d, CallbackBackoffMax)
}

// outboxLoop sends due callbacks. Every member runs it; the claim of outbox rows keeps two
// members from sending the same one at once.
func (m *Member) outboxLoop() {
	t := time.NewTicker(m.cfg.OutboxInterval)
	defer t.Stop()
	for {
		for m.sendBatch() {
			if m.root.Err() != nil {
				return
			}
		}
		select {
		case <-m.root.Done():
			return
		case <-t.C:
		}
	}
}

// sendBatch sends one claimed batch and reports whether it was full.
func (m *Member) sendBatch() (full bool) {
	ctx, cancel := m.stmt(m.root)
	items, err := m.deps.Outbox.ClaimOutbox(ctx, m.cfg.InstanceID, outboxBatch, outboxLease)
	cancel()
	if err != nil {
		if m.root.Err() == nil {
			m.log.Warn("claiming due callbacks failed", "error", m.redact(err.Error()))
		}
		return false
	}
	for _, it := range items {
		m.send(it)
	}
	return len(items) == outboxBatch
}

// DeliveryID names the callback in X-Sluice-Delivery: its run (a UUID, unique across
// histories) and its outbox row, so every retry carries the same id and no two
// callbacks share one.
func (it OutboxItem) DeliveryID() string { return it.RunID + "." + strconv.FormatInt(it.ID, 10) }

// send delivers one callback. A sealed row (SPEC §14.1) is opened here, in memory only;
// one that does not open (no key, another key) is retried like a failed delivery, since
// a member with the key may take it next.
func (m *Member) send(it OutboxItem) {
	dest, payload, err := runs.OpenOutbox(m.root, m.deps.Sealer, it.RunID, it.URL, it.Payload)
	status := 0
	if err == nil {
		ctx, cancel := context.WithTimeout(m.root, CallbackTimeout)
		status, err = m.deps.Deliverer.Deliver(ctx, it.DeliveryID(), dest, payload)
		cancel()
	}
	if m.root.Err() != nil {
		return // stopping: the claim's lease expires and another sender takes it
	}
	d := Decide(status, err, it.Attempts, it.CreatedAt, m.clock.Now())
	target := safeURL(dest)
	why := describe(status, err)
	sctx, scancel := m.stmt(m.root)
	defer scancel()
	var werr error
	switch d.Verdict {
	case Delivered:
		werr = m.deps.Outbox.OutboxDelivered(sctx, it.ID)
	case Rejected, Expired:
		m.log.Warn("callback dropped", "run_id", it.RunID, "url", target, "verdict", d.Verdict.String(),
			"attempts", it.Attempts+1, "last_error", m.redact(why))
		werr = m.deps.Outbox.OutboxDelivered(sctx, it.ID)
	case Retry:
		werr = m.deps.Outbox.OutboxRetry(sctx, it.ID, d.Next, m.redact(why))
	}
	if werr != nil {
		m.log.Warn("recording the callback attempt failed", "run_id", it.RunID, "error", m.redact(werr.Error()))
	}
}

// describe says how an attempt failed, without the URL's credentials or query.
func describe(status int, err error) string {
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			return fmt.Sprintf("%s %s: %v", ue.Op, safeURL(ue.URL), ue.Err)
		}
		return err.Error()
	}
	return fmt.Sprintf("HTTP %d", status)
}

// safeURL drops credentials from a URL before it is logged.
func safeURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}
