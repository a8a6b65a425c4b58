package console

import (
	"net/http"
	"sort"

	"github.com/sluicehq/sluice/application/runs"
)

type clusterData struct {
	ClusterStatus
	Pools []poolRow
}

type poolRow struct {
	Pool    string
	Pending int
	Members int // live, non-draining members serving it
}

// clusterPage shows the members, the pools with their pending runs and the scheduler
// leader. Like the API's cluster reads, it is for untenanted principals.
func (c *console) clusterPage(w http.ResponseWriter, r *http.Request, sess session) {
	if c.deps.Cluster == nil {
		c.fail(w, r, &sess, http.StatusNotFound, "this server shows no cluster view")
		return
	}
	// Tenant principals have only their tenant's runs and templates (SPEC §2.2).
	if err := runs.Require(principal(sess), runs.Viewer, "read the cluster"); err != nil {
		c.failErr(w, r, sess, err)
		return
	}
	st, err := c.deps.Cluster.Status(r.Context())
	if err != nil {
		c.failErr(w, r, sess, err)
		return
	}
	serving := map[string]int{}
	for _, m := range st.Members {
		for _, p := range m.Pools {
			if _, ok := serving[p]; !ok {
				serving[p] = 0
			}
			if m.Live && !m.Draining {
				serving[p]++
			}
		}
	}
	for p := range st.Pending {
		if _, ok := serving[p]; !ok {
			serving[p] = 0
		}
	}
	d := clusterData{ClusterStatus: st}
	for p, n := range serving {
		d.Pools = append(d.Pools, poolRow{Pool: p, Pending: st.Pending[p], Members: n})
	}
	sort.Slice(d.Pools, func(i, j int) bool { return d.Pools[i].Pool < d.Pools[j].Pool })
	c.show(w, r, sess, "cluster", "Cluster", "cluster", d)
}
