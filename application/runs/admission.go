package runs

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain/member"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/pool"
	"github.com/sluicehq/sluice/domain/state"
)

// Roster reads the membership for admission. The store implements it.
type Roster interface {
	// Roster returns the rows of members that have not stopped cleanly and the database
	// clock at the read, so liveness is judged by the clock heartbeats were written with.
	Roster(ctx context.Context) (members []member.Member, now time.Time, err error)
}

// Capabilities refuses a submission that a live member of an older release could not
// execute correctly (SPEC §4.10). A non-clustered server has no peers and needs none.
type Capabilities interface {
	// Check answers nil when every live member can take a run with need; otherwise a
	// *StateFormatRefusedError or a *PoolsUnsupportedError naming the members in the way.
	Check(ctx context.Context, need Need) error
}

// Need is what a run asks of the members that may claim it.
type Need struct {
	Pool string
	// StateFormat is the bookmark format its source needs; 0 when it keeps no state.
	StateFormat int
}

// NeedOf is what a run of cfg in poolName needs. Every connector needs the versioned
// envelope (state format 2) for incremental reads and nothing for full reads; when a
// connector can live with bare bookmarks, this is the place that learns it.
func NeedOf(cfg *pipeline.Config, poolName string) Need {
	n := Need{Pool: poolName}
	if cfg != nil && cfg.Replication.Type == pipeline.Incremental {
		n.StateFormat = state.FormatEnvelope
	}
	return n
}

// ClusterAdmission is the admission of a clustered server (SPEC §5.4, §4.10): it reads
// the membership on every call, so a pool is accepted as soon as a member serving it
// heartbeats and refused once the last one stops or its heartbeat is older than the TTL.
type ClusterAdmission struct {
	roster Roster
	ttl    time.Duration
	own    []string
}

var (
	_ PoolAdmission = (*ClusterAdmission)(nil)
	_ Capabilities  = (*ClusterAdmission)(nil)
)

// NewClusterAdmission judges liveness with ttl (--lease-ttl-secs). own are the pools of
// this server: it answers the submission, so it is live and serves them even before its
// first heartbeat is stored (a draining server refuses submissions before admission).
func NewClusterAdmission(roster Roster, ttl time.Duration, own []string) (*ClusterAdmission, error) {
	if roster == nil {
		return nil, errors.New("runs: cluster admission needs a roster")
	}
	if ttl <= 0 {
		return nil, fmt.Errorf("runs: cluster admission needs a positive --lease-ttl-secs, got %s", ttl)
	}
	return &ClusterAdmission{roster: roster, ttl: ttl, own: slices.Clone(own)}, nil
}

// Served returns the pools of live, non-draining members and this server's, sorted.
func (a *ClusterAdmission) Served(ctx context.Context) ([]string, error) {
	live, now, err := a.live(ctx)
	if err != nil {
		return nil, err
	}
	served := append(member.ServedPools(live, now, a.ttl), a.own...)
	slices.Sort(served)
	return slices.Compact(served), nil
}

// Check refuses need while a live member could not honour it: one that reads only an
// older state format than the source needs (bookmarks are written in the format every
// live member reads), or one without pool support when the pool is not the default (its
// claim does not filter by pool, so it would take the run).
func (a *ClusterAdmission) Check(ctx context.Context, need Need) error {
	if need.StateFormat <= 1 && (need.Pool == "" || need.Pool == pool.Default) {
		return nil // nothing an older member could get wrong: spare the read
	}
	live, _, err := a.live(ctx)
	if err != nil {
		return err
	}
	if need.StateFormat > 1 {
		if below := member.BelowStateFormat(live, need.StateFormat); len(below) > 0 {
			return &StateFormatRefusedError{Need: need.StateFormat, Reads: member.MinStateFormat(below), Members: refs(below)}
		}
	}
	if need.Pool != "" && need.Pool != pool.Default {
		if legacy := member.Legacy(live); len(legacy) > 0 {
			return &PoolsUnsupportedError{Pool: need.Pool, Members: refs(legacy)}
		}
	}
	return nil
}

func (a *ClusterAdmission) live(ctx context.Context) ([]member.Member, time.Time, error) {
	all, now, err := a.roster.Roster(ctx)
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("read the membership: %w", err)
	}
	return member.Live(all, now, a.ttl), now, nil
}

// MemberRef names a member in a refusal.
type MemberRef struct {
	InstanceID     string
	Host           string
	Listen         string
	Version        string
	StateFormatMax int
}

func (m MemberRef) String() string {
	var where []string
	if m.Host != "" {
		where = append(where, "host "+m.Host)
	}
	if m.Listen != "" {
		where = append(where, "listen "+m.Listen)
	}
	if m.Version != "" {
		where = append(where, "version "+m.Version)
	}
	if len(where) == 0 {
		return m.InstanceID
	}
	return m.InstanceID + " (" + strings.Join(where, ", ") + ")"
}

func refs(ms []member.Member) []MemberRef {
	out := make([]MemberRef, len(ms))
	for i, m := range ms {
		out[i] = MemberRef{InstanceID: m.InstanceID, Host: m.Host, Listen: m.Listen, Version: m.Version,
			StateFormatMax: max(m.StateFormatMax, 1)}
	}
	return out
}

func noun(ms []MemberRef) string {
	if len(ms) == 1 {
		return "live member"
	}
	return "live members"
}

func verb(ms []MemberRef, one, many string) string {
	if len(ms) == 1 {
		return one
	}
	return many
}

func names(ms []MemberRef) string {
	s := make([]string, len(ms))
	for i, m := range ms {
		s[i] = m.String()
	}
	return strings.Join(s, ", ")
}

// StateFormatRefusedError is a submission whose source needs a newer state format than a
// live member reads (state_format_refused, 422). errors.Is(err, ErrStateFormatRefused).
type StateFormatRefusedError struct {
	Need    int
	Reads   int // the highest format every refusing member reads (member.MinStateFormat)
	Members []MemberRef
}

func (e *StateFormatRefusedError) Error() string {
	return fmt.Sprintf("the source needs state format %d (incremental replication), but %s %s %s only format %d: "+
		"finish upgrading (or stop) it before submitting, or use full replication",
		e.Need, noun(e.Members), names(e.Members), verb(e.Members, "reads", "read"), e.Reads)
}

// Unwrap makes errors.Is(err, ErrStateFormatRefused) true.
func (e *StateFormatRefusedError) Unwrap() error { return ErrStateFormatRefused }

// PoolsUnsupportedError is a submission to a pool other than default while a live
// member's release predates pools (pool_unserved, 422): that member claims without
// looking at pools and would take the run. errors.Is(err, ErrPoolsUnsupported).
type PoolsUnsupportedError struct {
	Pool    string
	Members []MemberRef
}

func (e *PoolsUnsupportedError) Error() string {
	return fmt.Sprintf("pool %q cannot be used while %s %s %s a release without pool support "+
		"(claiming runs of every pool): upgrade or stop it, or submit to pool %s",
		e.Pool, noun(e.Members), names(e.Members), verb(e.Members, "runs", "run"), pool.Default)
}

// Unwrap makes errors.Is(err, ErrPoolsUnsupported) true.
func (e *PoolsUnsupportedError) Unwrap() error { return ErrPoolsUnsupported }
