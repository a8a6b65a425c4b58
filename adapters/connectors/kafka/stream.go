package kafka

import (
	"context"
	"fmt"
	"sync"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/application/execute"
)

// inflight tracks a streaming sink's records the brokers have not acknowledged yet: the
// producer's callbacks keep the ones that failed, so Commit can judge and resend them.
type inflight struct {
	mu     sync.Mutex
	failed []*kgo.Record
	err    error // the first failure
}

func (f *inflight) done(r *kgo.Record, err error) {
	if err == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err == nil {
		f.err = err
	}
	f.failed = append(f.failed, r)
}

// take returns and forgets the failures so far.
func (f *inflight) take() ([]*kgo.Record, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	recs, err := f.failed, f.err
	f.failed, f.err = nil, nil
	return recs, err
}

// firstErr is the first failure so far, left in place.
func (f *inflight) firstErr() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.err
}

// produceAsync hands the page to the producer, which batches it with the pages before and
// after it; it blocks only while the producer's buffer is full. A failure that is not
// worth a retry fails the page that notices it.
func (s *sink) produceAsync(ctx context.Context, recs []*kgo.Record) error {
	if err := s.inflight.firstErr(); err != nil && !execute.IsTransient(classify(err)) {
		return s.produceErr(ctx, err)
	}
	for _, r := range recs {
		s.cl.Produce(ctx, r, s.inflight.done)
	}
	return nil
}

// settle runs after the flush: records that failed transiently are produced again, page
// by page under the retry block; any other failure fails the run.
func (s *sink) settle(ctx context.Context) error {
	failed, err := s.inflight.take()
	if err == nil {
		return nil
	}
	if !execute.IsTransient(classify(err)) {
		return s.produceErr(ctx, err)
	}
	for _, r := range failed {
		// A failed record keeps the partition it was assigned; produce it afresh.
		r.Partition, r.Offset = 0, 0
	}
	return retry.Do(ctx, s.o.retry, func(ctx context.Context) error {
		return s.produce(ctx, failed)
	})
}

func (s *sink) produceErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return classify(fmt.Errorf("kafka: produce to topic %q: %w", s.o.topic, err))
}
