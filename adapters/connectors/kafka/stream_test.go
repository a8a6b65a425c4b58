package kafka_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluicehq/sluice/adapters/connectors/kafka"
	"github.com/sluicehq/sluice/application/execute"
)

// A full read's pages are pipelined: Write hands a page to the producer and returns while
// the brokers still hold the produce request; Commit waits for every acknowledgement.
func TestFullReadPagesArePipelinedAndSettledAtCommit(t *testing.T) {
	t.Parallel()
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "out"))
	require.NoError(t, err)
	defer c.Close()
	brokers := c.ListenAddrs()
	held, release := make(chan struct{}, 1), make(chan struct{})
	c.ControlKey(kmsg.Produce.Int16(), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		select {
		case held <- struct{}{}:
		default:
		}
		<-release // the broker answers no produce until the test says so
		return nil, nil, false
	})
	ctx := context.Background()
	snk, err := kafka.New().OpenSink(ctx, execute.WriteRequest{Config: map[string]any{"brokers": brokers, "topic": "out"}})
	require.NoError(t, err)
	require.Equal(t, execute.AtEnd, snk.Durability(), "a full read's pages become final at Commit")
	for i := range 3 {
		require.NoError(t, snk.Write(ctx, ids(10*i+1, 10*i+10)))
	}
	<-held // a produce request reached the broker and waits there, unanswered
	close(release)
	require.NoError(t, snk.Commit(ctx))
	require.Len(t, committed(t, brokers, "out"), 30)

	// With bookmarks each page is acknowledged before Write returns (per page).
	snk, err = kafka.New().OpenSink(ctx, execute.WriteRequest{Bookmarks: true, Config: map[string]any{"brokers": brokers, "topic": "out"}})
	require.NoError(t, err)
	require.Equal(t, execute.PerPage, snk.Durability())
	require.NoError(t, snk.Abort(ctx))
}

// ids is a page of one id column holding from..to.
func ids(from, to int) *execute.Page {
	var rows [][]any
	for i := from; i <= to; i++ {
		rows = append(rows, []any{int64(i)})
	}
	return &execute.Page{Columns: []string{"id"}, Rows: rows}
}
