package http

import (
	"cmp"
	"net/http"
	"slices"

	"github.com/gin-gonic/gin"

	"github.com/sluicehq/sluice/domain/pipeline"
)

type readyResponse struct {
	Status    string       `json:"status"`
	HistoryOK bool         `json:"history_ok"`
	QueueOK   bool         `json:"queue_ok"`
	Draining  bool         `json:"draining"`
	Cluster   clusterBlock `json:"cluster"`
}

type clusterBlock struct {
	Enabled   bool          `json:"enabled"`
	Instances int           `json:"instances"`
	Pools     []string      `json:"pools"`
	Members   []memberBlock `json:"members"`
}

type memberBlock struct {
	InstanceID    string   `json:"instance_id"`
	Listen        string   `json:"listen"`
	Pools         []string `json:"pools"`
	InFlight      int      `json:"in_flight"`
	MaxConcurrent int      `json:"max_concurrent"`
}

// readyz is GET /readyz (SPEC §2.6): 503 while the history is unreachable or the member
// drains, so load balancers stop sending work.
func (s *server) readyz(c *gin.Context) {
	r := Readiness{Status: "ok", HistoryOK: true, QueueOK: true, Cluster: Cluster{Instances: 1}}
	if s.deps.Health != nil {
		r = s.deps.Health.Ready(c.Request.Context())
	}
	ready := r.HistoryOK && !r.Draining
	if r.Status == "" {
		switch {
		case r.Draining:
			r.Status = "draining"
		case !r.HistoryOK:
			r.Status = "history_unavailable"
		default:
			r.Status = "ok"
		}
	}
	out := readyResponse{Status: r.Status, HistoryOK: r.HistoryOK, QueueOK: r.QueueOK, Draining: r.Draining,
		Cluster: clusterBlock{Enabled: r.Cluster.Enabled, Instances: r.Cluster.Instances, Pools: r.Cluster.Pools,
			Members: make([]memberBlock, 0, len(r.Cluster.Members))}}
	for _, m := range r.Cluster.Members {
		out.Cluster.Members = append(out.Cluster.Members, memberBlock{InstanceID: m.InstanceID, Listen: m.Listen,
			Pools: m.Pools, InFlight: m.InFlight, MaxConcurrent: m.MaxConcurrent})
	}
	status := http.StatusOK
	if !ready {
		status = http.StatusServiceUnavailable
	}
	c.JSON(status, out)
}

type connectorsResponse struct {
	Connectors []connectorResource `json:"connectors"`
}

type connectorResource struct {
	Type        string   `json:"type"`
	Description string   `json:"description"`
	Roles       []string `json:"roles"`
	ExactlyOnce bool     `json:"exactly_once"`
	Shardable   bool     `json:"shardable"`
	// Schemas holds one JSON Schema per role the connector can play, keyed by role.
	Schemas map[string]map[string]any `json:"schemas"`
}

// connectors is GET /v1/connectors: every registered connector with the JSON Schema of
// its config per role, rendered from the same Spec that validates configs.
func (s *server) connectors(c *gin.Context) {
	if err := checkQuery(c.Request.URL.Query()); err != nil {
		s.fail(c, err)
		return
	}
	out := connectorsResponse{Connectors: []connectorResource{}}
	if s.deps.Connectors != nil {
		for _, spec := range s.deps.Connectors.Specs() {
			r := connectorResource{Type: spec.Type, Description: spec.Description, Roles: []string{},
				ExactlyOnce: spec.ExactlyOnce, Shardable: spec.Shardable, Schemas: map[string]map[string]any{}}
			for _, role := range []pipeline.Role{pipeline.RoleSource, pipeline.RoleSink} {
				if spec.Roles&role != 0 {
					r.Roles = append(r.Roles, role.String())
					r.Schemas[role.String()] = pipeline.JSONSchema(spec, role)
				}
			}
			out.Connectors = append(out.Connectors, r)
		}
	}
	slices.SortFunc(out.Connectors, func(a, b connectorResource) int { return cmp.Compare(a.Type, b.Type) })
	c.JSON(http.StatusOK, out)
}
