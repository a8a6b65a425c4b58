package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
	"unicode/utf8"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/jsonlines"
	"github.com/sluicehq/sluice/adapters/connectors/internal/pager"
	"github.com/sluicehq/sluice/adapters/connectors/internal/records"
	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/state"
)

// RawColumns are the columns of `format: raw` rows.
var RawColumns = []string{"key", "value", "partition", "offset", "timestamp", "headers"}

type sourceOptions struct {
	common
	start  string
	format string
	batch  int
}

func sourceOptionsOf(req execute.ReadRequest) (sourceOptions, error) {
	var o sourceOptions
	var err error
	if o.common, err = commonOf(req.Config); err != nil {
		return o, err
	}
	if o.start, err = cfg.String(req.Config, "start", StartEarliest); err != nil {
		return o, err
	}
	if o.start != StartEarliest && o.start != StartLatest {
		return o, fmt.Errorf("config key \"start\" must be earliest or latest, got %q", o.start)
	}
	if until, err := cfg.String(req.Config, "until", UntilEnd); err != nil || until != UntilEnd {
		return o, fmt.Errorf("config key \"until\" must be end (runs are finite), got %v", req.Config["until"])
	}
	if o.format, err = cfg.String(req.Config, "format", FormatJSON); err != nil {
		return o, err
	}
	if o.format != FormatJSON && o.format != FormatRaw {
		return o, fmt.Errorf("config key \"format\" must be json or raw, got %q", o.format)
	}
	if o.batch, err = cfg.BatchSize(req.BatchSize, req.Config); err != nil {
		return o, err
	}
	return o, nil
}

// bounds are the offsets a read starts and stops at, per partition.
type bounds struct {
	start, end offsets
	weight     map[int32]int64 // records between the log start and the end: the shard planner's size
}

// listBounds asks the brokers for each partition's log start and last stable offset.
func listBounds(ctx context.Context, cl *kgo.Client, topic string) (bounds, error) {
	adm := kadm.NewClient(cl)
	ends, err := adm.ListCommittedOffsets(ctx, topic)
	if err != nil {
		return bounds{}, fmt.Errorf("list the end offsets of topic %q: %w", topic, err)
	}
	starts, err := adm.ListStartOffsets(ctx, topic)
	if err != nil {
		return bounds{}, fmt.Errorf("list the start offsets of topic %q: %w", topic, err)
	}
	b := bounds{start: offsets{}, end: offsets{}, weight: map[int32]int64{}}
	for p, lo := range ends[topic] {
		if errors.Is(lo.Err, kerr.UnknownTopicOrPartition) || p < 0 {
			return bounds{}, fmt.Errorf("topic %q does not exist", topic)
		}
		if lo.Err != nil {
			return bounds{}, fmt.Errorf("partition %d of topic %q: %w", p, topic, lo.Err)
		}
		st := starts[topic][p]
		if st.Err != nil {
			return bounds{}, fmt.Errorf("partition %d of topic %q: %w", p, topic, st.Err)
		}
		b.start[p], b.end[p] = st.Offset, lo.Offset
		b.weight[p] = lo.Offset - st.Offset
	}
	if len(b.end) == 0 {
		return bounds{}, fmt.Errorf("topic %q does not exist or has no partitions", topic)
	}
	return b, nil
}

// PlanShards splits the topic's partitions across at most n shards: partition p goes to
// shard p mod N (SPEC §14.4). A topic of one partition cannot be split.
func (*Connector) PlanShards(ctx context.Context, req execute.ReadRequest, n int) ([]execute.ShardSlice, error) {
	o, err := sourceOptionsOf(req)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	b, _, err := openBounds(ctx, o, req.Reach)
	if err != nil {
		return nil, err
	}
	count := min(n, len(b.end))
	if count < 2 {
		return nil, nil
	}
	plan := make([]execute.ShardSlice, count)
	for i := range plan {
		plan[i] = execute.ShardSlice{Index: i, Count: count}
	}
	for p, w := range b.weight {
		plan[int(p)%count].Weight += w
	}
	return plan, nil
}

// openBounds connects and lists the bounds; the client is returned open for the read.
func openBounds(ctx context.Context, o sourceOptions, r execute.Reach, extra ...kgo.Opt) (bounds, *kgo.Client, error) {
	octx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	cl, d, err := newClient(o.common, r, cancel, extra...)
	if err != nil {
		return bounds{}, nil, err
	}
	b, err := listBounds(octx, cl, o.topic)
	if err != nil {
		cl.Close()
		if ctx.Err() != nil {
			return bounds{}, nil, ctx.Err()
		}
		return bounds{}, nil, classify(fmt.Errorf("kafka: brokers %v: %w", o.brokers, d.explain(err)))
	}
	return b, cl, nil
}

// OpenSource lists where each partition of the read starts and ends, then consumes the
// partitions that have anything to read.
func (*Connector) OpenSource(ctx context.Context, req execute.ReadRequest) (execute.Source, error) {
	o, err := sourceOptionsOf(req)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	var after *state.Bookmark
	if req.Incremental != nil {
		after = req.Incremental.After
	}
	resume, err := offsetsOf(after)
	if err != nil {
		return nil, fmt.Errorf("kafka: %w", err)
	}
	// read_committed: messages of aborted transactions (a fenced writer's) are never read;
	// control records are kept so the read can step over the markers at a partition's end.
	b, cl, err := openBounds(ctx, o, req.Reach,
		kgo.FetchIsolationLevel(kgo.ReadCommitted()), kgo.KeepControlRecords(),
		// A read is finite: a fetch that holds only partitions at their end (or paused
		// while their turn comes) finds nothing new, and the broker waits the fetch max
		// wait before answering while the next partition's data is held back: at every
		// partition switch of a full read. franz-go's least wait (10 ms) keeps those
		// stalls short: 1M messages over 4 partitions took 1.5 s at 250 ms, 0.7 s at
		// 10 ms. Half a MiB per partition keeps fetches small enough to overlap with
		// writing the page before (1 and 4 MiB were slower, 4 MiB doubled the RSS).
		kgo.FetchMaxPartitionBytes(512<<10), kgo.FetchMaxBytes(4<<20),
		kgo.FetchMaxWait(10*time.Millisecond),
		// A finite read gains nothing from incremental fetch sessions (they save
		// resending the partition list on long-lived consumers), and franz-go v1.22.3
		// reads the session id unguarded in Close while a fetch still in flight updates
		// it: a data race found under -race when a read is closed mid-fetch.
		kgo.DisableFetchSessions())
	if err != nil {
		return nil, err
	}
	s := &source{o: o, cl: cl, next: offsets{}, end: offsets{}, retry: o.retry}
	if req.Incremental != nil {
		s.cursor = req.Incremental.Cursor
	}
	assign := map[int32]kgo.Offset{}
	for p, end := range b.end {
		if req.Shard != nil && int(p)%req.Shard.Count != req.Shard.Index {
			continue
		}
		next := b.start[p] // earliest; also where a partition the bookmark lacks (added since) starts
		if off, ok := resume[p]; ok {
			next = max(off, b.start[p])
		} else if resume == nil && o.start == StartLatest {
			next = end
		}
		s.next[p], s.end[p] = next, end
		if next < end {
			assign[p] = kgo.NewOffset().At(next)
		}
	}
	s.open = len(assign)
	if req.Incremental == nil {
		// A full read has no offsets bookmark: an exactly-once resume drops the rows an
		// earlier attempt delivered by count, so the rows must come in the same order on
		// every read. Partitions are read one after another, each in offset order
		// (sequence.go).
		s.seq = newSequence(cl, o.topic, assign)
	} else if len(assign) > 0 {
		cl.AddConsumePartitions(map[string]map[int32]kgo.Offset{o.topic: assign})
	}
	if req.Log != nil {
		req.Log.Debug("kafka read planned", "topic", o.topic, "partitions", len(s.next), "to_read", len(assign))
	}
	return s, nil
}

type source struct {
	o      sourceOptions
	cl     *kgo.Client
	retry  retry.Policy
	cursor string // bookmark cursor name; "" when the read is not incremental
	next   offsets
	end    offsets
	open   int       // partitions not yet read to their end
	seq    *sequence // a full read's partition order; nil for other reads
	build  records.Builder
	raw    [][]any
	bytes  int64
	err    error
	// Set by UseEncoding: values pass through as JSON lines (passthrough.go).
	encoded bool
	lines   []byte
	count   int
	hint    int // bytes of the last page's lines
}

// Next returns up to batch rows; partitions read to their end are paused, and the read
// ends when none is left.
func (s *source) Next(ctx context.Context) (*execute.Page, error) {
	if s.err != nil {
		return nil, s.err
	}
	for s.rows() < s.o.batch && s.open > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s.seq != nil && len(s.seq.pending) > 0 {
			if err := s.takePending(); err != nil {
				s.err = err
				return nil, err
			}
			continue
		}
		var fetches kgo.Fetches
		err := retry.Do(ctx, s.retry, func(ctx context.Context) error {
			fetches = s.cl.PollRecords(ctx, s.o.batch-s.rows())
			if err := ctx.Err(); err != nil {
				return err
			}
			for _, fe := range fetches.Errors() {
				return classify(fmt.Errorf("kafka: topic %q partition %d: fetch: %w", fe.Topic, fe.Partition, fe.Err))
			}
			return nil
		})
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			s.err = err
			return nil, err
		}
		var ferr error
		fetches.EachRecord(func(r *kgo.Record) {
			if ferr == nil {
				ferr = s.route(r)
			}
		})
		if ferr != nil {
			s.err = ferr
			return nil, ferr
		}
	}
	p := s.page()
	if p == nil {
		s.err = io.EOF
		return nil, io.EOF
	}
	return p, nil
}

func (s *source) rows() int {
	if s.encoded {
		return s.count
	}
	if s.o.format == FormatRaw {
		return len(s.raw)
	}
	return s.build.Len()
}

// take adds one fetched record, unless it lies past the partition's end.
func (s *source) take(r *kgo.Record) error {
	end, ok := s.end[r.Partition]
	if !ok || r.Offset < s.next[r.Partition] || s.next[r.Partition] >= end {
		return nil
	}
	if r.Offset >= end {
		s.done(r.Partition)
		return nil
	}
	s.next[r.Partition] = r.Offset + 1
	if s.next[r.Partition] >= end {
		s.done(r.Partition)
	}
	if r.Attrs.IsControl() {
		return nil
	}
	if s.o.format == FormatRaw {
		row := rawRow(r)
		s.bytes += pager.Size(row)
		s.raw = append(s.raw, row)
		return nil
	}
	var err error
	if s.encoded {
		if s.lines, err = jsonlines.Append(s.lines, r.Value, decodeLine); err == nil {
			s.count++
			s.bytes += int64(len(r.Value))
		}
	} else {
		err = s.build.AddJSON(r.Value)
	}
	if err != nil {
		return fmt.Errorf("kafka: topic %q partition %d offset %d: message value %w (use format: raw for values that are not JSON objects)",
			r.Topic, r.Partition, r.Offset, err)
	}
	return nil
}

// done stops fetching a partition that reached its end; a full read goes on with the
// next partition.
func (s *source) done(p int32) {
	s.next[p] = max(s.next[p], s.end[p])
	s.open--
	s.cl.PauseFetchPartitions(map[string][]int32{s.o.topic: {p}})
	if s.seq != nil && p == s.seq.cur {
		s.seq.advance(s.cl, s.o.topic)
	}
}

func rawRow(r *kgo.Record) []any {
	var key any
	if r.Key != nil {
		key = text(r.Key)
	}
	var value any
	if r.Value != nil {
		value = text(r.Value)
	}
	headers := make(map[string]any, len(r.Headers))
	for _, h := range r.Headers {
		headers[h.Key] = text(h.Value)
	}
	return []any{key, value, int64(r.Partition), r.Offset, r.Timestamp.UTC(), headers}
}

// text keeps UTF-8 bytes as a string and anything else as bytes.
func text(b []byte) any {
	if utf8.Valid(b) {
		return string(b)
	}
	return slices.Clone(b)
}

// page takes the rows gathered so far, with the offsets they reach as the bookmark.
func (s *source) page() *execute.Page {
	var p *execute.Page
	if s.encoded {
		if s.count == 0 {
			return nil
		}
		p = &execute.Page{Encoded: &execute.Encoded{Format: jsonlines.Format, Data: s.lines, Rows: s.count}, Bytes: s.bytes}
		// The sink owns the page's bytes: the next page gets a buffer of its own.
		s.hint = len(s.lines)
		s.lines, s.count, s.bytes = make([]byte, 0, s.hint+s.hint/8), 0, 0
	} else if s.o.format == FormatRaw {
		if len(s.raw) == 0 {
			return nil
		}
		p = &execute.Page{Columns: RawColumns, Rows: s.raw, Bytes: s.bytes}
		s.raw, s.bytes = nil, 0
	} else if p = s.build.Page(); p == nil {
		return nil
	}
	if s.cursor != "" {
		p.Bookmark = &state.Bookmark{Cursor: s.cursor, Value: s.next.encode()}
	}
	return p
}

// Close closes the client.
func (s *source) Close() error {
	s.cl.Close()
	return nil
}
