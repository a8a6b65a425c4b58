package runs_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/runs"
	"github.com/sluicehq/sluice/domain/member"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/pool"
)

// roster is a membership read at a fixed database clock.
type roster struct {
	mu      sync.Mutex
	members []member.Member
	now     time.Time
	err     error
	reads   int
}

func (r *roster) Roster(context.Context) ([]member.Member, time.Time, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reads++
	return r.members, r.now, r.err
}

func (r *roster) readCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.reads
}

const ttl = 30 * time.Second

// peer is a member that heartbeat age ago (by the roster's clock).
func peer(id string, age time.Duration, pools ...string) member.Member {
	return member.Member{InstanceID: id, Host: "host-" + id, Listen: "10.0.0.1:8080", Version: "1.4.0",
		Pools: pools, MaxConcurrent: 4, StateFormatMax: 2, VaultFormatMax: 1, HeartbeatAt: epoch.Add(-age)}
}

func newAdmission(t *testing.T, r *roster, own ...string) *runs.ClusterAdmission {
	t.Helper()
	a, err := runs.NewClusterAdmission(r, ttl, own)
	require.NoError(t, err)
	return a
}

func TestNewClusterAdmissionRefusesMissingParts(t *testing.T) {
	t.Parallel()
	_, err := runs.NewClusterAdmission(nil, ttl, nil)
	require.ErrorContains(t, err, "roster")
	_, err = runs.NewClusterAdmission(&roster{}, 0, nil)
	require.ErrorContains(t, err, "--lease-ttl-secs")
}

func TestClusterAdmissionServedPools(t *testing.T) {
	t.Parallel()
	draining := peer("d", time.Second, "drain-only")
	draining.Draining = true
	r := &roster{now: epoch, members: []member.Member{
		peer("a", time.Second, "gpu", "default"),
		peer("b", 29*time.Second, "private"),
		peer("stale", 31*time.Second, "stale-pool"),
		draining,
		peer("legacy", time.Second), // nil pools: an older release serves default only
	}}
	got, err := newAdmission(t, r, "own").Served(context.Background())
	require.NoError(t, err)
	require.Equal(t, []string{"default", "gpu", "own", "private"}, got,
		"live, non-draining members and this server; a stale heartbeat and a draining member serve nothing")

	r.err = errors.New("connection refused")
	_, err = newAdmission(t, r).Served(context.Background())
	require.ErrorContains(t, err, "connection refused")
}

func TestClusterAdmissionRefusesWhatOlderMembersCannotRun(t *testing.T) {
	t.Parallel()
	old := peer("old-1", time.Second, "default")
	old.StateFormatMax = 1
	legacy := peer("legacy-1", time.Second)
	gone := peer("gone", time.Minute)
	gone.StateFormatMax = 1
	gone.Pools = nil
	cases := []struct {
		name    string
		members []member.Member
		need    runs.Need
		want    error
		naming  string
	}{
		{"format 2 with a format-1 member live", []member.Member{peer("new", 0, "default"), old},
			runs.Need{Pool: "default", StateFormat: 2}, runs.ErrStateFormatRefused, "old-1 (host host-old-1"},
		{"format 2 when every live member reads it", []member.Member{peer("new", 0, "default"), gone},
			runs.Need{Pool: "default", StateFormat: 2}, nil, ""},
		{"a member advertising no format counts as format 1", []member.Member{func() member.Member {
			m := peer("zero", 0, "default")
			m.StateFormatMax = 0
			return m
		}()}, runs.Need{Pool: "default", StateFormat: 2}, runs.ErrStateFormatRefused, "zero"},
		{"a full run ignores state formats", []member.Member{old}, runs.Need{Pool: "default"}, nil, ""},
		{"another pool with a member without pool support", []member.Member{peer("new", 0, "gpu"), legacy},
			runs.Need{Pool: "gpu"}, runs.ErrPoolsUnsupported, "legacy-1"},
		{"the default pool with a member without pool support", []member.Member{legacy},
			runs.Need{Pool: "default"}, nil, ""},
		{"another pool once the old member stopped heartbeating", []member.Member{peer("new", 0, "gpu"), gone},
			runs.Need{Pool: "gpu", StateFormat: 2}, nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := newAdmission(t, &roster{now: epoch, members: tc.members}).Check(context.Background(), tc.need)
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, tc.want)
			require.Contains(t, err.Error(), tc.naming)
		})
	}
}

func TestClusterAdmissionMessages(t *testing.T) {
	t.Parallel()
	old := peer("old-1", 0, "default")
	old.StateFormatMax = 1
	err := newAdmission(t, &roster{now: epoch, members: []member.Member{old}}).
		Check(context.Background(), runs.Need{Pool: "default", StateFormat: 2})
	var sfe *runs.StateFormatRefusedError
	require.ErrorAs(t, err, &sfe)
	require.Equal(t, 2, sfe.Need)
	require.Equal(t, []runs.MemberRef{{InstanceID: "old-1", Host: "host-old-1", Listen: "10.0.0.1:8080",
		Version: "1.4.0", StateFormatMax: 1}}, sfe.Members)
	require.Equal(t, "the source needs state format 2 (incremental replication), but live member old-1 "+
		"(host host-old-1, listen 10.0.0.1:8080, version 1.4.0) reads only format 1: finish upgrading (or stop) it "+
		"before submitting, or use full replication", err.Error())

	err = newAdmission(t, &roster{now: epoch, members: []member.Member{peer("l1", 0), peer("l2", 0)}}).
		Check(context.Background(), runs.Need{Pool: "gpu"})
	var pue *runs.PoolsUnsupportedError
	require.ErrorAs(t, err, &pue)
	require.Equal(t, "gpu", pue.Pool)
	require.Len(t, pue.Members, 2)
	require.Contains(t, err.Error(), `pool "gpu" cannot be used while live members l1 (host host-l1`)
	require.Contains(t, err.Error(), "run a release without pool support")
	require.Contains(t, err.Error(), "submit to pool default")
}

func TestClusterAdmissionCheckSparesTheReadWhenNothingIsAsked(t *testing.T) {
	t.Parallel()
	r := &roster{now: epoch, err: errors.New("must not be read")}
	a := newAdmission(t, r)
	require.NoError(t, a.Check(context.Background(), runs.Need{Pool: "default"}))
	require.NoError(t, a.Check(context.Background(), runs.Need{}))
	require.Zero(t, r.readCount())
	require.ErrorContains(t, a.Check(context.Background(), runs.Need{Pool: "gpu"}), "must not be read")
}

func TestNeedOf(t *testing.T) {
	t.Parallel()
	require.Equal(t, runs.Need{Pool: "gpu"}, runs.NeedOf(&pipeline.Config{Replication: pipeline.Replication{Type: pipeline.Full}}, "gpu"))
	require.Equal(t, runs.Need{Pool: "default", StateFormat: 2},
		runs.NeedOf(&pipeline.Config{Replication: pipeline.Replication{Type: pipeline.Incremental, Cursor: "id"}}, "default"))
	require.Equal(t, runs.Need{Pool: "x"}, runs.NeedOf(nil, "x"))
}

func TestSubmitThroughClusterAdmission(t *testing.T) {
	t.Parallel()
	old := peer("old-1", time.Second, "default", "gpu")
	old.StateFormatMax = 1
	r := &roster{now: epoch, members: []member.Member{peer("self", 0, "default"), old}}
	h := newHarness(t, withDeps(func(d *runs.Deps) {
		a, err := runs.NewClusterAdmission(r, ttl, []string{"default"})
		require.NoError(t, err)
		d.Admission, d.Capabilities = a, a
	}))
	incremental := strings.Replace(baseConfig, "pipeline:\n", "replication: {type: incremental, cursor: id}\npipeline:\n", 1)

	res := h.submit(t, req(operator, baseConfig))
	require.Equal(t, "pending", res.Status, "a full run is fine with a format-1 member live")

	_, err := h.svc.Submit(context.Background(), req(operator, incremental))
	require.ErrorIs(t, err, runs.ErrStateFormatRefused)
	require.Contains(t, err.Error(), "old-1")

	gpu := req(operator, baseConfig)
	gpu.Pool = "gpu"
	h.submit(t, gpu) // served by old-1, which supports pools

	nowhere := req(operator, baseConfig)
	nowhere.Pool = "tpu"
	_, err = h.svc.Submit(context.Background(), nowhere)
	var ue *pool.UnservedError
	require.ErrorAs(t, err, &ue)
	require.Equal(t, []string{"default", "gpu"}, ue.Served)
	require.Contains(t, err.Error(), "start a member with --pool tpu")

	r.mu.Lock()
	r.members = append(r.members, peer("legacy-1", time.Second))
	r.mu.Unlock()
	_, err = h.svc.Submit(context.Background(), gpu)
	require.ErrorIs(t, err, runs.ErrPoolsUnsupported)
	require.Contains(t, err.Error(), "legacy-1")
}
