package kafka_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/adapters/connectors/kafka"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/run"
	"github.com/sluicehq/sluice/domain/state"
)

// seed writes ids from..to round-robin over three partitions.
func seed(t *testing.T, brokers []string, from, to int) {
	t.Helper()
	byPartition := map[int32][]any{}
	for id := from; id <= to; id++ {
		byPartition[int32(id%3)] = append(byPartition[int32(id%3)], map[string]any{"id": id})
	}
	for p, values := range byPartition {
		produce(t, brokers, "t", p, values...)
	}
}

func lastBookmark(pages []*execute.Page) *state.Bookmark {
	var b *state.Bookmark
	for _, p := range pages {
		if p.Bookmark != nil {
			b = p.Bookmark
		}
	}
	return b
}

func TestIncrementalResumesFromPartitionOffsets(t *testing.T) {
	t.Parallel()
	brokers := cluster(t, 3, "t")
	seed(t, brokers, 1, 30)
	c := kafka.New()
	cfg := map[string]any{"brokers": brokers, "topic": "t"}
	read := func(after *state.Bookmark) []*execute.Page {
		return conntest.Read(t, c, execute.ReadRequest{Config: cfg, BatchSize: 7,
			Incremental: &execute.Incremental{Cursor: "offset", After: after}})
	}
	first := read(nil)
	require.ElementsMatch(t, conntest.Seq(1, 30), conntest.Ints(t, first, "id"))
	b := lastBookmark(first)
	require.NotNil(t, b)
	require.Equal(t, "offset", b.Cursor)
	require.JSONEq(t, `{"0":10,"1":10,"2":10}`, b.Value.(string), "the bookmark is every partition's next offset")

	// Resuming after a page in the middle yields exactly the rows not yet confirmed.
	mid := first[1].Bookmark
	rest := read(mid)
	require.ElementsMatch(t, conntest.Seq(1, 30), append(conntest.Ints(t, first[:2], "id"), conntest.Ints(t, rest, "id")...))

	seed(t, brokers, 31, 36)
	require.ElementsMatch(t, conntest.Seq(31, 36), conntest.Ints(t, read(b), "id"), "a later run reads only new messages")
}

func TestStartLatestReadsNothingOldAndUntilEndStops(t *testing.T) {
	t.Parallel()
	brokers := cluster(t, 3, "t")
	seed(t, brokers, 1, 5)
	c := kafka.New()
	cfg := map[string]any{"brokers": brokers, "topic": "t", "start": "latest"}
	src, err := c.OpenSource(context.Background(), execute.ReadRequest{Config: cfg, BatchSize: 10,
		Incremental: &execute.Incremental{Cursor: "offset"}})
	require.NoError(t, err)
	// Messages produced after the run started lie past its end: the read is finite.
	seed(t, brokers, 6, 8)
	_, err = src.Next(context.Background())
	require.ErrorIs(t, err, io.EOF)
	require.NoError(t, src.Close())
}

func TestRawFormat(t *testing.T) {
	t.Parallel()
	brokers := cluster(t, 1, "t")
	produce(t, brokers, "t", 0, []byte("plain text"), []byte{0xff, 0x00})
	pages := conntest.Read(t, kafka.New(), execute.ReadRequest{
		Config: map[string]any{"brokers": brokers, "topic": "t", "format": "raw"}, BatchSize: 10})
	require.Len(t, pages, 1)
	require.Equal(t, kafka.RawColumns, pages[0].Columns)
	require.Equal(t, "plain text", pages[0].Rows[0][1])
	require.Equal(t, []byte{0xff, 0x00}, pages[0].Rows[1][1], "values that are not UTF-8 stay bytes")
	require.Equal(t, int64(1), pages[0].Rows[1][3])
}

func TestShardsSplitPartitionsModuloN(t *testing.T) {
	t.Parallel()
	brokers := cluster(t, 3, "t")
	seed(t, brokers, 1, 30)
	c := kafka.New()
	req := execute.ReadRequest{Config: map[string]any{"brokers": brokers, "topic": "t"}, BatchSize: 100}
	plan, err := c.PlanShards(context.Background(), req, 2)
	require.NoError(t, err)
	require.Len(t, plan, 2)
	require.EqualValues(t, 20, plan[0].Weight, "partitions 0 and 2")
	require.EqualValues(t, 10, plan[1].Weight, "partition 1")
	var all []int64
	for _, s := range plan {
		r := req
		r.Shard = &s
		got := conntest.Ints(t, conntest.Read(t, c, r), "id")
		for _, id := range got {
			require.Equal(t, s.Index, int(id%3)%2, "id %d is in partition %d, which belongs to shard %d", id, id%3, (id%3)%2)
		}
		all = append(all, got...)
	}
	require.ElementsMatch(t, conntest.Seq(1, 30), all)

	plan, err = c.PlanShards(context.Background(), req, 8)
	require.NoError(t, err)
	require.Len(t, plan, 3, "never more shards than partitions")
}

func TestUnreachableBrokerNamesConnectorAndCause(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close()) // nothing listens there any more
	cfg := map[string]any{"brokers": []string{addr}, "topic": "t", "timeout_secs": int64(1)}
	_, err = kafka.New().OpenSource(context.Background(), execute.ReadRequest{Config: cfg, BatchSize: 10})
	require.Error(t, err)
	require.Contains(t, err.Error(), "kafka: brokers ["+addr+"]")
	require.True(t, execute.IsTransient(err), "an unreachable broker may come back: %v", err)
	_, err = kafka.New().OpenSink(context.Background(), execute.WriteRequest{Config: cfg})
	require.ErrorContains(t, err, "kafka: brokers ["+addr+"]")
}

func TestUnknownTopic(t *testing.T) {
	t.Parallel()
	brokers := cluster(t, 1, "t")
	cfg := map[string]any{"brokers": brokers, "topic": "missing", "timeout_secs": int64(5)}
	_, err := kafka.New().OpenSource(context.Background(), execute.ReadRequest{Config: cfg, BatchSize: 10})
	require.ErrorContains(t, err, `topic "missing" does not exist`)
	_, err = kafka.New().OpenSink(context.Background(), execute.WriteRequest{Config: cfg})
	require.ErrorContains(t, err, `topic "missing" does not exist`)
}

// A writer whose transactional.id was taken over by a newer one is fenced by Kafka's
// producer epoch: its transaction fails with a lost lease and none of its messages is
// ever visible to read_committed readers.
func TestStaleTransactionalWriterIsFenced(t *testing.T) {
	t.Parallel()
	brokers := cluster(t, 1, "out")
	c := kafka.New()
	cfg := map[string]any{"brokers": brokers, "topic": "out"}
	open := func() execute.FencedSink {
		s, err := c.OpenSink(context.Background(), execute.WriteRequest{Config: cfg})
		require.NoError(t, err)
		return s.(execute.FencedSink)
	}
	ctx := context.Background()
	old := open()
	wm, err := old.Fence(ctx, "_/orders")
	require.NoError(t, err)
	page := conntest.Page([]string{"id"}, []any{int64(1)})
	require.NoError(t, old.WriteAt(ctx, page, execute.Position{Rows: 1}))

	newer := open()
	wm2, err := newer.Fence(ctx, "_/orders")
	require.NoError(t, err)
	require.Greater(t, wm2.Epoch, wm.Epoch)
	require.EqualValues(t, 1, wm2.Position.Rows, "the newer writer resumes from the committed position")

	err = old.WriteAt(ctx, conntest.Page([]string{"id"}, []any{int64(2)}), execute.Position{Rows: 2})
	require.ErrorIs(t, err, run.ErrLeaseLost)
	require.NoError(t, old.Abort(ctx))

	require.NoError(t, newer.WriteAt(ctx, conntest.Page([]string{"id"}, []any{int64(3)}), execute.Position{Rows: 2}))
	require.NoError(t, newer.CommitAt(ctx, execute.Position{Rows: 2, CompletedBy: "run-1"}))
	var got []string
	for _, r := range committed(t, brokers, "out") {
		got = append(got, string(r.Value))
	}
	require.Equal(t, []string{`{"id":1}`, `{"id":3}`}, got)

	again := open()
	wm3, err := again.Fence(ctx, "_/orders")
	require.NoError(t, err)
	require.Equal(t, execute.Position{Rows: 2, CompletedBy: "run-1"}, wm3.Position)
	require.NoError(t, again.Abort(ctx))
}

func TestConfigErrorsNameTheKey(t *testing.T) {
	t.Parallel()
	for key, cfg := range map[string]map[string]any{
		"brokers":      {"brokers": []string{"nohost"}, "topic": "t"},
		"topic":        {"brokers": []string{"h:1"}},
		"start":        {"brokers": []string{"h:1"}, "topic": "t", "start": "middle"},
		"retry":        {"brokers": []string{"h:1"}, "topic": "t", "retry": map[string]any{"attempts": 0}},
		"timeout_secs": {"brokers": []string{"h:1"}, "topic": "t", "timeout_secs": int64(0)},
	} {
		_, err := kafka.New().OpenSource(context.Background(), execute.ReadRequest{Config: cfg})
		require.ErrorContains(t, err, key, fmt.Sprint(cfg))
	}
}

func TestSpecLeavesDirectivesForTheRun(t *testing.T) {
	t.Parallel()
	spec := kafka.New().Spec()
	require.Empty(t, spec.Check(0, map[string]any{"brokers": []string{"${env:KAFKA}", "b:9092"}, "topic": "t"}, "p"))
	require.Len(t, spec.Check(0, map[string]any{"brokers": []string{"nohost"}, "topic": "t"}, "p"), 1)
}

// A full read has no offsets bookmark, so an exactly-once resume drops what an earlier
// attempt delivered by row count: the rows come in the same order on every read,
// partition after partition, each in offset order.
func TestFullReadOrderIsStable(t *testing.T) {
	t.Parallel()
	brokers := cluster(t, 3, "t")
	seed(t, brokers, 1, 30)
	req := execute.ReadRequest{Config: map[string]any{"brokers": brokers, "topic": "t"}, BatchSize: 4}
	var want []int64
	for p := int64(0); p < 3; p++ {
		for id := int64(1); id <= 30; id++ {
			if id%3 == p {
				want = append(want, id)
			}
		}
	}
	for range 2 {
		require.Equal(t, want, conntest.Ints(t, conntest.Read(t, kafka.New(), req), "id"))
	}
}

func TestTargetsListTheBrokers(t *testing.T) {
	t.Parallel()
	got := kafka.New().Targets(0, map[string]any{"brokers": []string{"k1.internal:9092", "${env:B}", "10.0.0.2:9093"}})
	require.Equal(t, []execute.Target{{Key: "brokers", Host: "k1.internal", Port: 9092}, {Key: "brokers", Host: "10.0.0.2", Port: 9093}}, got)
}
