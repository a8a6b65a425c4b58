package connectors

import (
	"fmt"
	"slices"
	"sort"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// Connector is anything registrable: it declares its Spec and implements
// execute.SourceConnector and/or execute.SinkConnector for the roles the Spec claims.
type Connector interface {
	Spec() pipeline.Spec
}

// Registry is an immutable set of connectors keyed by type name; safe for concurrent use.
type Registry struct {
	specs   map[string]pipeline.Spec
	sources map[string]execute.SourceConnector
	sinks   map[string]execute.SinkConnector
	order   []string // sorted type names
}

var _ execute.Registry = (*Registry)(nil)

// New builds a registry. A duplicate or empty type name, or a Spec claiming a role the
// connector does not implement, is a programming error and panics; use Build to get an
// error instead.
func New(conns ...Connector) *Registry {
	r, err := Build(conns...)
	if err != nil {
		panic(err)
	}
	return r
}

// Build is New returning an error instead of panicking.
func Build(conns ...Connector) (*Registry, error) {
	r := &Registry{
		specs:   make(map[string]pipeline.Spec, len(conns)),
		sources: make(map[string]execute.SourceConnector),
		sinks:   make(map[string]execute.SinkConnector),
	}
	for _, c := range conns {
		if c == nil {
			return nil, fmt.Errorf("connectors: nil connector")
		}
		spec := c.Spec()
		if spec.Type == "" {
			return nil, fmt.Errorf("connectors: %T has an empty type name", c)
		}
		if _, dup := r.specs[spec.Type]; dup {
			return nil, fmt.Errorf("connectors: type %q registered twice", spec.Type)
		}
		if spec.Roles&pipeline.RoleBoth == 0 {
			return nil, fmt.Errorf("connectors: type %q declares neither the source nor the sink role", spec.Type)
		}
		if spec.Roles&pipeline.RoleSource != 0 {
			src, ok := c.(execute.SourceConnector)
			if !ok {
				return nil, fmt.Errorf("connectors: type %q declares the source role but %T has no OpenSource", spec.Type, c)
			}
			r.sources[spec.Type] = src
		}
		if spec.Roles&pipeline.RoleSink != 0 {
			snk, ok := c.(execute.SinkConnector)
			if !ok {
				return nil, fmt.Errorf("connectors: type %q declares the sink role but %T has no OpenSink", spec.Type, c)
			}
			r.sinks[spec.Type] = snk
		}
		r.specs[spec.Type] = spec
		r.order = append(r.order, spec.Type)
	}
	sort.Strings(r.order)
	return r, nil
}

// Spec returns the Spec registered under typ.
func (r *Registry) Spec(typ string) (pipeline.Spec, bool) {
	s, ok := r.specs[typ]
	return s, ok
}

// Types lists the type names that can play role, sorted. A role of RoleBoth lists the
// types that can play either.
func (r *Registry) Types(role pipeline.Role) []string {
	out := []string{}
	for _, t := range r.order {
		if r.specs[t].Roles&role != 0 {
			out = append(out, t)
		}
	}
	return out
}

// Source returns the source connector of typ.
func (r *Registry) Source(typ string) (execute.SourceConnector, bool) {
	s, ok := r.sources[typ]
	return s, ok
}

// Sink returns the sink connector of typ.
func (r *Registry) Sink(typ string) (execute.SinkConnector, bool) {
	s, ok := r.sinks[typ]
	return s, ok
}

// Specs returns every registered Spec sorted by type name (for GET /v1/connectors).
func (r *Registry) Specs() []pipeline.Spec {
	out := make([]pipeline.Spec, 0, len(r.order))
	for _, t := range r.order {
		out = append(out, r.specs[t])
	}
	return slices.Clip(out)
}
