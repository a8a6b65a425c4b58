package kafka_test

import (
	"context"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/tests/contract/connector"
)

// cluster starts an in-process Kafka (kfake: the real protocol on a loopback port) with
// topics of the given partition count; it is closed when the test ends.
func cluster(t testing.TB, partitions int32, topics ...string) []string {
	t.Helper()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...))
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c.ListenAddrs()
}

func client(t testing.TB, brokers []string, opts ...kgo.Opt) *kgo.Client {
	t.Helper()
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(brokers...)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(cl.Close)
	return cl
}

// produce writes values (JSON-encoded unless []byte) to topic, partition chosen by key
// order when partition >= 0 is not given.
func produce(t testing.TB, brokers []string, topic string, partition int32, values ...any) {
	t.Helper()
	cl := client(t, brokers, kgo.RecordPartitioner(kgo.ManualPartitioner()))
	var recs []*kgo.Record
	for _, v := range values {
		b, ok := v.([]byte)
		if !ok {
			var err error
			b, err = json.Marshal(v)
			require.NoError(t, err)
		}
		recs = append(recs, &kgo.Record{Topic: topic, Partition: partition, Value: b})
	}
	require.NoError(t, cl.ProduceSync(context.Background(), recs...).FirstErr())
}

// objects turns a dataset into JSON objects.
func objects(d connector.Dataset) []any {
	out := make([]any, len(d.Rows))
	for i, r := range d.Rows {
		o := map[string]any{}
		for j, c := range d.Columns {
			o[c] = r[j]
		}
		out[i] = o
	}
	return out
}

// jsonValue is how a value comes back after a trip through JSON: times as RFC 3339 text,
// whole floats as integers.
func jsonValue(v any) any {
	if f, ok := v.(float64); ok && f == math.Trunc(f) {
		return int64(f)
	}
	return connector.JSONValue(v)
}

// committed reads every committed message of topic (read_committed, to the end) as
// decoded objects, partition by partition in offset order.
func committed(t testing.TB, brokers []string, topic string) []*kgo.Record {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	adm := kadm.NewClient(client(t, brokers))
	ends, err := adm.ListCommittedOffsets(ctx, topic)
	require.NoError(t, err)
	assign := map[int32]kgo.Offset{}
	want := map[int32]int64{}
	for p, lo := range ends[topic] {
		require.NoError(t, lo.Err)
		if lo.Offset > 0 {
			assign[p] = kgo.NewOffset().AtStart()
			want[p] = lo.Offset
		}
	}
	if len(assign) == 0 {
		return nil
	}
	cl := client(t, brokers, kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign}),
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords(), kgo.DisableFetchSessions())
	var out []*kgo.Record
	next := map[int32]int64{}
	for {
		done := true
		for p, end := range want {
			if next[p] < end {
				done = false
			}
		}
		if done {
			return out
		}
		f := cl.PollFetches(ctx)
		require.NoError(t, ctx.Err())
		for _, fe := range f.Errors() {
			require.NoError(t, fe.Err)
		}
		f.EachRecord(func(r *kgo.Record) {
			next[r.Partition] = r.Offset + 1
			if r.Offset < want[r.Partition] && !r.Attrs.IsControl() {
				out = append(out, r)
			}
		})
	}
}
