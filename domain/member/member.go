package member

import (
	"slices"
	"time"

	"github.com/sluicehq/sluice/domain/pool"
)

// Member is one member's heartbeat row.
type Member struct {
	InstanceID string // new on every process start
	Host       string
	PID        int
	Listen     string
	Version    string
	// Pools the member serves. nil means the member's release predates pools (the column
	// is NULL): it serves only the default pool. Stores must keep NULL and an empty list
	// apart.
	Pools          []string
	MaxConcurrent  int
	InFlight       int
	StateFormatMax int // highest bookmark format it reads; 0 (not advertised) counts as 1
	VaultFormatMax int // highest sealed format it opens; 0 (not advertised) counts as 1
	Draining       bool
	HeartbeatAt    time.Time
}

// Live reports whether the member heartbeat within ttl (the lease TTL) of now. The
// comparison is the one leases use: live while heartbeat+ttl > now.
func (m Member) Live(now time.Time, ttl time.Duration) bool {
	return m.HeartbeatAt.Add(ttl).After(now)
}

// Serves reports whether the member takes work of p. A draining member serves nothing, so
// peers stop counting it the moment it starts shutting down.
func (m Member) Serves(p string) bool {
	if m.Draining {
		return false
	}
	if m.Pools == nil {
		return p == pool.Default
	}
	return slices.Contains(m.Pools, p)
}

// LegacyPools reports whether the member's release predates pools.
func (m Member) LegacyPools() bool { return m.Pools == nil }

// Free is how many more runs or shards the member can take.
func (m Member) Free() int { return max(m.MaxConcurrent-m.InFlight, 0) }

// Live returns the members that heartbeat within ttl of now, in their order.
func Live(members []Member, now time.Time, ttl time.Duration) []Member {
	var out []Member
	for _, m := range members {
		if m.Live(now, ttl) {
			out = append(out, m)
		}
	}
	return out
}

// ServedPools returns the pools served by live, non-draining members, sorted and unique:
// what admission accepts (pool.Admit) and what /readyz shows.
func ServedPools(members []Member, now time.Time, ttl time.Duration) []string {
	var out []string
	for _, m := range members {
		if !m.Live(now, ttl) || m.Draining {
			continue
		}
		if m.Pools == nil {
			out = append(out, pool.Default)
			continue
		}
		out = append(out, m.Pools...)
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// MinStateFormat is the highest bookmark format every given member reads: bookmarks are
// written in it so that any member can resume any run. Pass live members only; 0 means
// there were none (no constraint from peers).
func MinStateFormat(live []Member) int {
	low := 0
	for i, m := range live {
		v := max(m.StateFormatMax, 1) // a member that advertises nothing reads format 1
		if i == 0 || v < low {
			low = v
		}
	}
	return low
}

// BelowStateFormat returns the members whose state format is below need, so a refusal
// can name them (SPEC §4.10 state_format_refused).
func BelowStateFormat(live []Member, need int) []Member {
	var out []Member
	for _, m := range live {
		if max(m.StateFormatMax, 1) < need {
			out = append(out, m)
		}
	}
	return out
}

// Legacy returns the members without pool support, so a submission to a pool other than
// default can be refused naming them while they are live (SPEC §4.10).
func Legacy(live []Member) []Member {
	var out []Member
	for _, m := range live {
		if m.LegacyPools() {
			out = append(out, m)
		}
	}
	return out
}
