package pipeline_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/pipeline"
)

func TestCanonicalJSON(t *testing.T) {
	t.Parallel()
	a := m("b", l(1, 2.5, true, nil), "a", "x<&>\"y", "c", m("z", 1, "y", "2"))
	b := m("c", m("y", "2", "z", 1), "a", "x<&>\"y", "b", l(1, 2.5, true, nil))
	require.Equal(t, string(a.CanonicalJSON()), string(b.CanonicalJSON()))
	require.Equal(t, `{"a":"x<&>\"y","b":[1,2.5,true,null],"c":{"y":"2","z":1}}`, string(a.CanonicalJSON()))
	require.True(t, json.Valid(a.CanonicalJSON()))

	// Types matter: the string "1" and the integer 1 differ.
	require.NotEqual(t, string(m("v", "1").CanonicalJSON()), string(m("v", 1).CanonicalJSON()))
	// Spellings of one value do not.
	n1 := &pipeline.Node{Kind: pipeline.KindScalar, Type: pipeline.TypeFloat, Value: "1.50"}
	n2 := &pipeline.Node{Kind: pipeline.KindScalar, Type: pipeline.TypeFloat, Value: "1.5"}
	require.Equal(t, string(n1.CanonicalJSON()), string(n2.CanonicalJSON()))
	bl := &pipeline.Node{Kind: pipeline.KindScalar, Type: pipeline.TypeBool, Value: "True"}
	require.Equal(t, "true", string(bl.CanonicalJSON()))
	var nilNode *pipeline.Node
	require.Equal(t, "null", string(nilNode.CanonicalJSON()))
}
