package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/adapters/connectors/internal/watermark"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/run"
)

// DefaultWatermarkTopic holds exactly-once positions when the config names no other.
const DefaultWatermarkTopic = "sluice_watermarks"

var _ execute.FencedSink = (*sink)(nil)

// txnState is what an exactly-once sink holds after Fence.
type txnState struct {
	key   string // the state key: the transactional.id and the watermark record's key
	epoch int16
}

// wmRecord is the value of a watermark record.
type wmRecord struct {
	Epoch       int64   `json:"epoch"`
	Bookmark    *string `json:"bookmark"`
	Rows        int64   `json:"rows"`
	CompletedBy *string `json:"completed_by"`
}

// Fence initialises a transactional producer whose transactional.id is key. Kafka bumps
// the producer epoch of that id, aborts whatever transaction an older producer left open
// and refuses that producer from then on, which is the fence SPEC §1.7 asks for. The
// position is the last committed watermark record of key.
func (s *sink) Fence(ctx context.Context, key string) (execute.Watermark, error) {
	if err := s.ensureWatermarkTopic(ctx); err != nil {
		return execute.Watermark{}, err
	}
	s.shut()
	cl, err := s.connect(ctx, s.o.topic, kgo.TransactionalID(key), kgo.TransactionTimeout(time.Minute))
	if err != nil {
		return execute.Watermark{}, err
	}
	s.cl, s.close = cl, false
	_, epoch, err := cl.ProducerID(ctx)
	if err != nil {
		return execute.Watermark{}, classify(fmt.Errorf("kafka: init transactional producer %q: %w", key, err))
	}
	s.txn = &txnState{key: key, epoch: epoch}
	pos, err := s.readWatermark(ctx, key)
	if err != nil {
		return execute.Watermark{}, err
	}
	return execute.Watermark{Epoch: int64(epoch), Position: pos}, nil
}

// ensureWatermarkTopic creates the compacted one-partition watermark topic when missing.
func (s *sink) ensureWatermarkTopic(ctx context.Context) error {
	adm := kadm.NewClient(s.cl)
	compact := "compact"
	resp, err := adm.CreateTopic(ctx, 1, -1, map[string]*string{"cleanup.policy": &compact}, s.o.watermarkTopic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		return classify(fmt.Errorf("kafka: create watermark topic %q: %w", s.o.watermarkTopic, err))
	}
	return nil
}

// readWatermark scans the watermark topic (read_committed) for key's last record.
func (s *sink) readWatermark(ctx context.Context, key string) (execute.Position, error) {
	topic := s.o.watermarkTopic
	src, err := (&Connector{}).OpenSource(ctx, execute.ReadRequest{Config: map[string]any{
		"brokers": s.o.brokers, "topic": topic, "format": FormatRaw,
		"timeout_secs": int64(s.o.timeout / time.Second),
	}, BatchSize: 1000, Reach: s.reach})
	if err != nil {
		return execute.Position{}, err
	}
	defer src.Close()
	var last []byte
	for {
		p, err := src.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return execute.Position{}, err
		}
		for _, row := range p.Rows {
			if row[0] == key {
				v, _ := row[1].(string)
				last = []byte(v)
			}
		}
	}
	if last == nil {
		return execute.Position{}, nil
	}
	var w wmRecord
	if err := json.Unmarshal(last, &w); err != nil {
		return execute.Position{}, fmt.Errorf("kafka: watermark %q in topic %q is not a watermark record: %w", key, topic, err)
	}
	pos, err := watermark.Decode(watermark.Row{Bookmark: w.Bookmark, Rows: w.Rows, CompletedBy: w.CompletedBy})
	if err != nil {
		return execute.Position{}, fmt.Errorf("kafka: watermark %q: %w", key, err)
	}
	return pos, nil
}

func (s *sink) watermarkRecord(pos execute.Position) (*kgo.Record, error) {
	row, err := watermark.Encode(pos)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	v, err := json.Marshal(wmRecord{Epoch: int64(s.txn.epoch), Bookmark: row.Bookmark, Rows: row.Rows, CompletedBy: row.CompletedBy})
	if err != nil {
		return nil, fmt.Errorf("kafka: encode watermark: %w", err)
	}
	return &kgo.Record{Topic: s.o.watermarkTopic, Key: []byte(s.txn.key), Value: v}, nil
}

// WriteAt writes the page and the position in one transaction.
func (s *sink) WriteAt(ctx context.Context, p *execute.Page, pos execute.Position) error {
	if s.txn == nil {
		return errors.New("kafka: WriteAt before Fence")
	}
	recs, err := s.records(p)
	if err != nil {
		return err
	}
	return s.transact(ctx, recs, pos)
}

// CommitAt records the final position in a transaction of its own and closes.
func (s *sink) CommitAt(ctx context.Context, pos execute.Position) error {
	if s.txn == nil {
		return errors.New("kafka: CommitAt before Fence")
	}
	defer s.shut()
	return s.transact(ctx, nil, pos)
}

// transact commits recs and the watermark record atomically; an aborted attempt leaves
// nothing visible to read_committed readers, so a transient failure is retried whole.
func (s *sink) transact(ctx context.Context, recs []*kgo.Record, pos execute.Position) error {
	wm, err := s.watermarkRecord(pos)
	if err != nil {
		return err
	}
	all := append(recs, wm)
	return retry.Do(ctx, s.o.retry, func(ctx context.Context) error {
		if err := s.cl.BeginTransaction(); err != nil {
			return s.txnErr("begin transaction", err)
		}
		if err := s.cl.ProduceSync(ctx, all...).FirstErr(); err != nil {
			_ = s.cl.AbortBufferedRecords(context.WithoutCancel(ctx))
			_ = s.cl.EndTransaction(context.WithoutCancel(ctx), kgo.TryAbort)
			return s.txnErr("produce", err)
		}
		if err := s.cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
			_ = s.cl.EndTransaction(context.WithoutCancel(ctx), kgo.TryAbort)
			return s.txnErr("commit transaction", err)
		}
		return nil
	})
}

// txnErr words a transaction failure; a fenced producer means a newer writer of the same
// state key took over.
func (s *sink) txnErr(what string, err error) error {
	if errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch) {
		return fmt.Errorf("kafka: %s (transactional.id %q, epoch %d): %w: %w", what, s.txn.key, s.txn.epoch, run.ErrLeaseLost, err)
	}
	return classify(fmt.Errorf("kafka: %s (transactional.id %q): %w", what, s.txn.key, err))
}
