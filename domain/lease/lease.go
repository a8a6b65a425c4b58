package lease

import (
	"fmt"
	"time"

	"github.com/sluicehq/sluice/domain/run"
)

// MinTTL is the shortest lease TTL allowed: renewals run every TTL/3 and statements time
// out after TTL/6, which below 3 s leaves no room for a database round trip.
const MinTTL = 3 * time.Second

// Lease is a member's hold on a run or a shard. Epoch grows with every claim, so a write
// from an earlier holder no longer matches and is fenced off.
type Lease struct {
	Owner     string
	Epoch     int64
	ExpiresAt time.Time
}

// Ref names one held item and the epoch it is held at: what a member sends to renew and
// to fence its writes.
type Ref struct {
	ID    string
	Epoch int64
}

// RenewInterval is how often a member renews its leases and heartbeats: three renewals
// fit in one TTL, so one slow or failed round trip does not lose the lease.
func RenewInterval(ttl time.Duration) time.Duration { return ttl / 3 }

// StatementTimeout bounds every lease statement, so a hung database call ends well
// before the lease it tries to renew.
func StatementTimeout(ttl time.Duration) time.Duration { return ttl / 6 }

// OutageCutoff is how long after it SENT its last successful renewal a member keeps
// executing without reaching the history. It then cancels its work, a third of a TTL
// before a peer may reclaim it, so the two never run the same item at once.
func OutageCutoff(ttl time.Duration) time.Duration { return 2 * ttl / 3 }

// Grant is the lease a claim gives owner: the epoch after last, expiring ttl after now.
func Grant(owner string, last int64, now time.Time, ttl time.Duration) Lease {
	return Lease{Owner: owner, Epoch: last + 1, ExpiresAt: now.Add(ttl)}
}

// Expired reports whether the lease has run out at now. A lease is valid while
// expires_at > now, the same comparison the fenced SQL makes.
func (l Lease) Expired(now time.Time) bool { return !l.ExpiresAt.After(now) }

// Remaining is how long the lease still runs at now; never negative.
func (l Lease) Remaining(now time.Time) time.Duration {
	return max(l.ExpiresAt.Sub(now), 0)
}

// Permits is the fence: a write by owner at epoch is allowed only while it still holds
// this lease and the lease has not expired at now.
func (l Lease) Permits(owner string, epoch int64, now time.Time) bool {
	return owner != "" && l.Owner == owner && l.Epoch == epoch && !l.Expired(now)
}

// Renew extends a lease to now+ttl. An expired lease cannot be renewed: a peer may
// already have reclaimed it, so the holder gets run.ErrLeaseLost and must stop.
func (l Lease) Renew(now time.Time, ttl time.Duration) (Lease, error) {
	if l.Expired(now) {
		return l, fmt.Errorf("lease of %s at epoch %d expired at %s: %w",
			l.Owner, l.Epoch, l.ExpiresAt.UTC().Format(time.RFC3339Nano), run.ErrLeaseLost)
	}
	l.ExpiresAt = now.Add(ttl)
	return l, nil
}

// ValidateTTL checks --lease-ttl-secs.
func ValidateTTL(ttl time.Duration) error {
	if ttl < MinTTL {
		return fmt.Errorf("--lease-ttl-secs must be at least %d (got %s): leases are renewed every TTL/3", int(MinTTL/time.Second), ttl)
	}
	return nil
}

// ValidatePollInterval checks that --cluster-poll-secs is shorter than the lease TTL;
// otherwise a member would notice cancels and new work only after leases expired.
func ValidatePollInterval(poll, ttl time.Duration) error {
	if poll <= 0 {
		return fmt.Errorf("--cluster-poll-secs must be positive (got %s)", poll)
	}
	if poll >= ttl {
		return fmt.Errorf("--cluster-poll-secs (%s) must be shorter than --lease-ttl-secs (%s)", poll, ttl)
	}
	return nil
}
