package kafka_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/kafka"
	"github.com/sluicehq/sluice/tests/contract/connector"
)

func TestContract(t *testing.T) {
	t.Parallel()
	c := kafka.New()
	connector.Run(t, connector.Harness{
		Name: "kafka",
		Spec: c.Spec(),
		NewSource: func(t *testing.T, data connector.Dataset) connector.SourceCase {
			brokers := cluster(t, 1, "in")
			if len(data.Rows) > 0 {
				produce(t, brokers, "in", 0, objects(data)...)
			}
			return connector.SourceCase{Source: c, Config: map[string]any{"brokers": brokers, "topic": "in"},
				Want: connector.Map(data, jsonValue)}
		},
		BrokenSource: func(t *testing.T) connector.BrokenCase {
			brokers := cluster(t, 1, "in")
			produce(t, brokers, "in", 0, map[string]any{"id": 1}, []byte("not json"))
			return connector.BrokenCase{Source: c, Config: map[string]any{"brokers": brokers, "topic": "in"},
				Want: `partition 0 offset 1: message value`}
		},
		NewSink: func(t *testing.T) connector.SinkCase {
			brokers := cluster(t, 1, "out")
			return connector.SinkCase{
				Sink:   c,
				Config: map[string]any{"brokers": brokers, "topic": "out", "key": []string{"id"}},
				ReadBack: func(t *testing.T, cols []string) ([][]any, bool) {
					recs := committed(t, brokers, "out")
					var rows [][]any
					for _, r := range recs {
						rows = append(rows, connector.ParseJSONL(t, r.Value, cols)...)
					}
					return rows, len(recs) > 0
				},
				Normalize: connector.JSONValue,
				// A full read streams without a transaction: Kafka cannot take back what
				// the brokers took before the abort.
				KeepsSent: true,
			}
		},
		Caps: connector.Capabilities{ExactlyOnce: true, Reaches: connector.Reaches{Dials: true}},
	})
	require.NotEmpty(t, c.Spec().Fields)
}
