package http_test

import (
	"testing"

	httpconn "github.com/sluicehq/sluice/adapters/connectors/http"
	"github.com/sluicehq/sluice/tests/contract/connector"
)

func TestContract(t *testing.T) {
	t.Parallel()
	c := httpconn.New()
	connector.Run(t, connector.Harness{
		Name: "http",
		Spec: c.Spec(),
		NewSource: func(t *testing.T, data connector.Dataset) connector.SourceCase {
			a := newAPI(t, "offset", 4, data)
			return connector.SourceCase{Source: c, Config: a.config(nil), Want: connector.Map(data, jsonValue)}
		},
		BrokenSource: func(t *testing.T) connector.BrokenCase {
			a := newAPI(t, "none", 10, connector.Data(3))
			return connector.BrokenCase{Source: c, Config: a.config(map[string]any{"records_path": "data"}),
				Want: `page 1: records_path "data" is a JSON object, not an array`}
		},
		Caps: connector.Capabilities{Incremental: true, Reaches: connector.Reaches{Dials: true}},
	})
}
