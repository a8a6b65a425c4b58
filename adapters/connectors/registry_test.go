package connectors_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

type specOnly struct{ spec pipeline.Spec }

func (s specOnly) Spec() pipeline.Spec { return s.spec }

type source struct{ specOnly }

func (source) OpenSource(context.Context, execute.ReadRequest) (execute.Source, error) {
	return nil, nil
}

type sink struct{ specOnly }

func (sink) OpenSink(context.Context, execute.WriteRequest) (execute.Sink, error) { return nil, nil }

type both struct{ specOnly }

func (both) OpenSource(context.Context, execute.ReadRequest) (execute.Source, error) {
	return nil, nil
}
func (both) OpenSink(context.Context, execute.WriteRequest) (execute.Sink, error) { return nil, nil }

func spec(typ string, r pipeline.Role) specOnly {
	return specOnly{pipeline.Spec{Type: typ, Roles: r, Description: typ}}
}

func TestRegistryLookups(t *testing.T) {
	t.Parallel()
	r := connectors.New(
		sink{spec("zeta", pipeline.RoleSink)},
		both{spec("alpha", pipeline.RoleBoth)},
		source{spec("mid", pipeline.RoleSource)},
	)
	var _ execute.Registry = r

	require.Equal(t, []string{"alpha", "mid"}, r.Types(pipeline.RoleSource))
	require.Equal(t, []string{"alpha", "zeta"}, r.Types(pipeline.RoleSink))
	require.Equal(t, []string{"alpha", "mid", "zeta"}, r.Types(pipeline.RoleBoth))

	s, ok := r.Spec("mid")
	require.True(t, ok)
	require.Equal(t, "mid", s.Type)
	_, ok = r.Spec("nope")
	require.False(t, ok)

	_, ok = r.Source("alpha")
	require.True(t, ok)
	_, ok = r.Source("zeta")
	require.False(t, ok, "a sink-only type is no source")
	_, ok = r.Sink("mid")
	require.False(t, ok, "a source-only type is no sink")
	_, ok = r.Sink("zeta")
	require.True(t, ok)

	var types []string
	for _, s := range r.Specs() {
		types = append(types, s.Type)
	}
	require.Equal(t, []string{"alpha", "mid", "zeta"}, types)
	require.Empty(t, connectors.New().Types(pipeline.RoleSource))
}

func TestRegistryRefusesProgrammingErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		conns []connectors.Connector
		want  string
	}{
		{"duplicate", []connectors.Connector{source{spec("a", pipeline.RoleSource)}, sink{spec("a", pipeline.RoleSink)}}, `type "a" registered twice`},
		{"empty type", []connectors.Connector{source{spec("", pipeline.RoleSource)}}, "empty type name"},
		{"no role", []connectors.Connector{source{spec("a", 0)}}, "neither the source nor the sink role"},
		{"source role without OpenSource", []connectors.Connector{sink{spec("a", pipeline.RoleBoth)}}, "declares the source role"},
		{"sink role without OpenSink", []connectors.Connector{source{spec("a", pipeline.RoleSink)}}, "declares the sink role"},
		{"nil", []connectors.Connector{nil}, "nil connector"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := connectors.Build(tc.conns...)
			require.ErrorContains(t, err, tc.want)
			require.PanicsWithError(t, err.Error(), func() { connectors.New(tc.conns...) })
		})
	}
}
