package kafka

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/cursor"
	"github.com/sluicehq/sluice/adapters/connectors/internal/jsonenc"
	"github.com/sluicehq/sluice/adapters/connectors/internal/jsonlines"
	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/application/execute"
)

type sinkOptions struct {
	common
	key            []string
	watermarkTopic string
}

func sinkOptionsOf(c map[string]any) (sinkOptions, error) {
	var o sinkOptions
	var err error
	if o.common, err = commonOf(c); err != nil {
		return o, err
	}
	if o.key, err = cfg.Strings(c, "key"); err != nil {
		return o, err
	}
	if o.watermarkTopic, err = cfg.String(c, "watermark_topic", DefaultWatermarkTopic); err != nil {
		return o, err
	}
	if o.watermarkTopic == "" || o.watermarkTopic == o.topic {
		return o, errors.New("config key \"watermark_topic\" must name a topic other than topic")
	}
	return o, nil
}

// OpenSink connects and checks that the topic exists, so a wrong broker or topic fails
// before the source is read.
func (*Connector) OpenSink(ctx context.Context, req execute.WriteRequest) (execute.Sink, error) {
	o, err := sinkOptionsOf(req.Config)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	s := &sink{o: o, reach: req.Reach, bookmarks: req.Bookmarks}
	if s.cl, err = s.connect(ctx, o.topic); err != nil {
		return nil, err
	}
	return s, nil
}

// sink produces pages; with a Fence it becomes transactional (fenced.go).
type sink struct {
	o     sinkOptions
	reach execute.Reach
	cl    *kgo.Client
	enc   *jsonenc.RowEncoder
	keyAt []int
	// Exactly-once only.
	txn     *txnState
	buf     []byte
	bufHint int // bytes of the last page's values
	close   bool
	// bookmarks: the run saves a bookmark per page, so each page must be acknowledged
	// before Write returns; without, pages are pipelined (see streams).
	bookmarks bool
	inflight  inflight
	lines     bool // AcceptEncoding took JSON-line pages
}

// connect builds a client and waits until the brokers list topic (and any other topics).
func (s *sink) connect(ctx context.Context, topic string, extra ...kgo.Opt) (*kgo.Client, error) {
	octx, cancel := context.WithTimeout(ctx, s.o.timeout)
	defer cancel()
	opts := append([]kgo.Opt{
		kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()),
		kgo.ProducerBatchMaxBytes(1 << 20),
		kgo.MaxBufferedRecords(50000),
		// A page is produced whole and then awaited: lingering would only delay the last
		// batch of every page.
		kgo.ProducerLinger(0),
	}, extra...)
	cl, d, err := newClient(s.o.common, s.reach, cancel, opts...)
	if err != nil {
		return nil, err
	}
	topics, err := kadm.NewClient(cl).ListTopics(octx, topic)
	if err == nil {
		if td, ok := topics[topic]; !ok || errors.Is(td.Err, kerr.UnknownTopicOrPartition) {
			err = fmt.Errorf("topic %q does not exist; create it first", topic)
		} else if td.Err != nil {
			err = fmt.Errorf("topic %q: %w", topic, td.Err)
		}
	}
	if err != nil {
		cl.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, classify(fmt.Errorf("kafka: brokers %v: %w", s.o.brokers, d.explain(err)))
	}
	return cl, nil
}

// Durability: each page is acknowledged by the brokers before Write returns, unless
// the sink streams; then every page is acknowledged by the end of Commit.
func (s *sink) Durability() execute.Durability {
	if s.streams() {
		return execute.AtEnd
	}
	return execute.PerPage
}

// streams reports whether pages are produced without waiting for their acknowledgements:
// when no bookmark is saved per page (a full read) and no transaction is open. Waiting
// per page leaves the brokers idle while the next page is read and encoded, and drains
// the producer's batches at every page edge; a full read gains nothing from it, since a
// rerun reads everything again. Kafka cannot unsend either way: a failed run's messages
// acknowledged so far stay in the topic, as they do with per-page waits.
func (s *sink) streams() bool { return !s.bookmarks && s.txn == nil }

// records encodes a page as messages: the row as a JSON object, the key from the key
// columns (the one value as text, several as a JSON array).
func (s *sink) records(p *execute.Page) ([]*kgo.Record, error) {
	if p.Encoded != nil {
		return s.lineRecords(p.Encoded)
	}
	if s.enc == nil || !slices.Equal(s.enc.Columns(), p.Columns) {
		s.enc = jsonenc.NewRowEncoder(p.Columns)
		s.keyAt = s.keyAt[:0]
		for _, k := range s.o.key {
			i := slices.Index(p.Columns, k)
			if i < 0 {
				return nil, fmt.Errorf("kafka: key column %q is not a column of the page (columns: %v); fix config key \"key\"", k, p.Columns)
			}
			s.keyAt = append(s.keyAt, i)
		}
	}
	recs := make([]*kgo.Record, 0, len(p.Rows))
	// Sized like the last page's values: growing a megabyte by doubling copies it twice.
	s.buf = make([]byte, 0, s.bufHint+s.bufHint/8)
	for n, row := range p.Rows {
		start := len(s.buf)
		var err error
		if s.buf, err = s.enc.AppendRow(s.buf, row); err != nil {
			return nil, fmt.Errorf("kafka: row %d of the page: %w", n+1, err)
		}
		value := s.buf[start : len(s.buf)-1 : len(s.buf)-1] // without the newline
		r := &kgo.Record{Value: value}
		if len(s.keyAt) > 0 {
			if r.Key, err = s.key(row); err != nil {
				return nil, fmt.Errorf("kafka: row %d of the page: %w", n+1, err)
			}
		}
		recs = append(recs, r)
	}
	// The values point into buf; a fresh buffer for the next page keeps them intact
	// until the brokers have them.
	s.bufHint, s.buf = len(s.buf), nil
	return recs, nil
}

// AcceptEncoding takes JSON-line pages (objects checked by the source and passed as they
// are) when every message is just the object: no key columns to pick out of a row, and
// no transaction (an exactly-once sink writes decoded pages with WriteAt).
func (s *sink) AcceptEncoding(_ context.Context, e execute.Encoding) bool {
	s.lines = e.Format == jsonlines.Format && len(s.o.key) == 0 && s.txn == nil
	return s.lines
}

// lineRecords makes a message of every line; the values point into the page's bytes,
// which the source never reuses.
func (s *sink) lineRecords(e *execute.Encoded) ([]*kgo.Record, error) {
	if e.Format != jsonlines.Format || !s.lines {
		return nil, fmt.Errorf("kafka: page encoded as %q, which this sink did not accept", e.Format)
	}
	slab := make([]kgo.Record, 0, e.Rows)
	recs := make([]*kgo.Record, 0, e.Rows)
	jsonlines.Lines(e.Data, func(l []byte) {
		slab = append(slab, kgo.Record{Value: l[:len(l):len(l)]})
		recs = append(recs, &slab[len(slab)-1])
	})
	return recs, nil
}

func (s *sink) key(row []any) ([]byte, error) {
	if len(s.keyAt) == 1 {
		return []byte(cursor.Text(row[s.keyAt[0]])), nil
	}
	b := []byte{'['}
	for i, at := range s.keyAt {
		if i > 0 {
			b = append(b, ',')
		}
		var err error
		if b, err = jsonenc.AppendValue(b, row[at]); err != nil {
			return nil, fmt.Errorf("key column %q: %w", s.o.key[i], err)
		}
	}
	return append(b, ']'), nil
}

// Write produces the page and waits for every message's acknowledgement; transient
// failures are retried per page (the idempotent producer keeps a retried message from
// being written twice within one session).
func (s *sink) Write(ctx context.Context, p *execute.Page) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.txn != nil {
		return errors.New("kafka: the sink was fenced for exactly-once delivery; it writes with WriteAt")
	}
	recs, err := s.records(p)
	if err != nil {
		return err
	}
	if s.streams() {
		return s.produceAsync(ctx, recs)
	}
	return retry.Do(ctx, s.o.retry, func(ctx context.Context) error {
		return s.produce(ctx, recs)
	})
}

func (s *sink) produce(ctx context.Context, recs []*kgo.Record) error {
	if err := s.cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return classify(fmt.Errorf("kafka: produce to topic %q: %w", s.o.topic, err))
	}
	return nil
}

// Commit flushes and closes the client; a streaming sink then sends again, under the
// retry block, whatever the brokers failed transiently.
func (s *sink) Commit(ctx context.Context) error {
	defer s.shut()
	if err := s.cl.Flush(ctx); err != nil {
		return fmt.Errorf("kafka: flush: %w", err)
	}
	if s.streams() {
		return s.settle(ctx)
	}
	return nil
}

// Abort closes the client, which drops what is still buffered; messages the brokers
// already took stay, whether acknowledged per page or streamed (Kafka cannot unsend).
func (s *sink) Abort(ctx context.Context) error {
	if s.txn != nil && s.cl != nil {
		_ = s.cl.AbortBufferedRecords(ctx)
		_ = s.cl.EndTransaction(ctx, kgo.TryAbort)
	}
	s.shut()
	return nil
}

func (s *sink) shut() {
	if s.cl != nil && !s.close {
		s.close = true
		s.cl.Close()
	}
}
