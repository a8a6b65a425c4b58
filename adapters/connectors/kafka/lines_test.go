package kafka_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/adapters/connectors/kafka"
	"github.com/sluicehq/sluice/application/execute"
)

// A full read of JSON values offers JSON-line pages, in the decoded read's order
// (partition after partition, each in offset order) with pages small enough that the
// partition read ahead is paused with a page held.
func TestFullReadPassesValuesThroughAsLines(t *testing.T) {
	t.Parallel()
	brokers := cluster(t, 3, "t")
	seed(t, brokers, 1, 60)
	produce(t, brokers, "t", 1, []byte(` {"id": 61, "tags":["a"]} `), []byte("{\"id\":62,\n\"s\":\"\xff\"}"))
	req := execute.ReadRequest{Config: map[string]any{"brokers": brokers, "topic": "t"}, BatchSize: 4}
	var want []string
	for _, id := range conntest.Ints(t, conntest.Read(t, kafka.New(), req), "id") {
		switch id {
		case 61:
			want = append(want, `{"id": 61, "tags":["a"]}`) // as written, without the spaces around it
		case 62:
			want = append(want, "{\"id\":62,\"s\":\"\uFFFD\"}") // a line break and invalid UTF-8: decoded, encoded again
		default:
			want = append(want, fmt.Sprintf(`{"id":%d}`, id))
		}
	}
	require.Len(t, want, 62)
	for range 2 {
		pages, err := conntest.ReadLines(t, kafka.New(), req)
		require.NoError(t, err)
		require.Equal(t, want, conntest.Lines(pages))
		for _, p := range pages {
			require.LessOrEqual(t, p.Encoded.Rows, 4, "pages keep the batch size")
		}
	}

	// Incremental reads (the bookmark rides on decoded pages) and raw values keep rows.
	require.False(t, conntest.Offers(t, kafka.New(), execute.ReadRequest{Config: req.Config, Incremental: &execute.Incremental{Cursor: "offset"}}))
	require.False(t, conntest.Offers(t, kafka.New(), execute.ReadRequest{Config: conntest.With(req.Config, "format", "raw")}))
}

// A value that is not a JSON object fails the JSON-line read with the decoded read's
// words, naming the partition and offset.
func TestFullReadLinesFailAsTheDecodedReadFails(t *testing.T) {
	t.Parallel()
	brokers := cluster(t, 1, "t")
	produce(t, brokers, "t", 0, []byte(`{"id":1}`), []byte(`[1,2]`))
	req := execute.ReadRequest{Config: map[string]any{"brokers": brokers, "topic": "t"}}
	decoded := conntest.ReadErr(kafka.New(), req)
	require.Error(t, decoded)
	_, lines := conntest.ReadLines(t, kafka.New(), req)
	require.Error(t, lines)
	require.Equal(t, decoded.Error(), lines.Error())
	require.Contains(t, lines.Error(), "partition 0 offset 1")
}

// The sink takes JSON-line pages as message values when it has no key columns to pick
// and no transaction; each line becomes one message as it is.
func TestSinkProducesLinesAsTheyAre(t *testing.T) {
	t.Parallel()
	brokers := cluster(t, 1, "out")
	ctx := context.Background()
	lines := execute.Encoding{Format: "json-lines"}
	cfg := map[string]any{"brokers": brokers, "topic": "out"}

	s, err := kafka.New().OpenSink(ctx, execute.WriteRequest{Config: cfg})
	require.NoError(t, err)
	require.True(t, s.(execute.PassthroughSink).AcceptEncoding(ctx, lines))
	require.NoError(t, s.Write(ctx, conntest.LinePage(`{"b":1,"a":2}`, `{"c":[1]}`)))
	require.NoError(t, s.Commit(ctx))
	var got []string
	for _, r := range committed(t, brokers, "out") {
		got = append(got, string(r.Value))
	}
	require.Equal(t, []string{`{"b":1,"a":2}`, `{"c":[1]}`}, got)

	keyed, err := kafka.New().OpenSink(ctx, execute.WriteRequest{Config: conntest.With(cfg, "key", []string{"id"})})
	require.NoError(t, err)
	require.False(t, keyed.(execute.PassthroughSink).AcceptEncoding(ctx, lines), "a key is picked from decoded rows")
	require.ErrorContains(t, keyed.Write(ctx, conntest.LinePage(`{"id":1}`)), `page encoded as "json-lines", which this sink did not accept`)
	require.NoError(t, keyed.Abort(ctx))

	fenced := conntest.Fenced(t, kafka.New(), execute.WriteRequest{Config: cfg})
	_, err = fenced.Fence(ctx, "lines-test")
	require.NoError(t, err)
	require.False(t, fenced.(execute.PassthroughSink).AcceptEncoding(ctx, lines), "exactly-once writes decoded pages")
	require.NoError(t, fenced.Abort(ctx))
}
