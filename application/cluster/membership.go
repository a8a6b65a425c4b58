package cluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/sluicehq/sluice/domain/member"
)

// View is the cluster block of /readyz (SPEC §2.6).
type View struct {
	Enabled   bool
	Instances int // live members, this one included
	// Pools are this member's pools; nil (rendered null) for a member without pool support.
	Pools   []string
	Members []MemberView // live members by instance id
}

// MemberView is one live member as /readyz lists it.
type MemberView struct {
	InstanceID    string
	Listen        string
	Pools         []string // nil for a member without pool support
	InFlight      int
	MaxConcurrent int
}

// Self is what the view needs of this process's member; *Member implements it.
type Self interface {
	Row() MemberRow
}

// Membership answers the cluster block of a clustered member from the live membership
// rows, so every member shows the same list.
type Membership struct {
	roster Roster
	ttl    time.Duration
	self   Self
}

// NewMembership reads live members from roster (liveness: a heartbeat within ttl, the
// lease TTL) and completes the list with self.
func NewMembership(roster Roster, ttl time.Duration, self Self) (*Membership, error) {
	var errs []string
	if roster == nil {
		errs = append(errs, "a roster")
	}
	if self == nil {
		errs = append(errs, "the member itself")
	}
	if ttl <= 0 {
		errs = append(errs, fmt.Sprintf("a positive --lease-ttl-secs (got %s)", ttl))
	}
	if len(errs) > 0 {
		return nil, errors.New("cluster: membership needs " + strings.Join(errs, ", "))
	}
	return &Membership{roster: roster, ttl: ttl, self: self}, nil
}

// View reads the live members. This member is always listed, with its current
// in-flight count: it is answering, so it is live even before its first heartbeat is
// stored. An unanswered read is an error (the history is unreachable).
func (m *Membership) View(ctx context.Context) (View, error) {
	all, now, err := m.roster.Roster(ctx)
	if err != nil {
		return View{}, fmt.Errorf("read the membership: %w", err)
	}
	live := member.Live(all, now, m.ttl)
	self := m.self.Row()
	out := View{Enabled: true, Pools: slices.Clone(self.Pools), Members: make([]MemberView, 0, len(live)+1)}
	seen := false
	for _, l := range live {
		v := MemberView{InstanceID: l.InstanceID, Listen: l.Listen, Pools: slices.Clone(l.Pools),
			InFlight: l.InFlight, MaxConcurrent: l.MaxConcurrent}
		if l.InstanceID == self.InstanceID {
			seen = true
			v = viewOf(self)
		}
		out.Members = append(out.Members, v)
	}
	if !seen {
		out.Members = append(out.Members, viewOf(self))
		slices.SortFunc(out.Members, func(a, b MemberView) int { return strings.Compare(a.InstanceID, b.InstanceID) })
	}
	out.Instances = len(out.Members)
	return out, nil
}

// SingleView is the cluster block of a server without --cluster: one instance, itself.
func SingleView(self MemberRow) View {
	return View{Enabled: false, Instances: 1, Pools: slices.Clone(self.Pools), Members: []MemberView{viewOf(self)}}
}

func viewOf(r MemberRow) MemberView {
	return MemberView{InstanceID: r.InstanceID, Listen: r.Listen, Pools: slices.Clone(r.Pools),
		InFlight: r.InFlight, MaxConcurrent: r.MaxConcurrent}
}
