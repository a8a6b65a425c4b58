package lease

import (
	"fmt"
	"time"
)

// MinTTL is the shortest lease TTL allowed: renewals run every TTL/3 and statements time
// out after TTL/6, which below 3 s leaves no room for a database round trip.
const MinTTL = 3 * time.Second

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
