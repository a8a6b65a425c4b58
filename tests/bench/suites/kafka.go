package suites

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"strconv"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/sluicehq/sluice/tests/bench/harness"
)

// Names of the kafka suite.
const (
	kafkaPartitions   = 4
	kafkaInTopic      = "in"
	kafkaInput        = "kafka-in.jsonl"
	kafkaBaselinePkg  = "./tests/bench/baseline/kafkajsonl"
	kafkaBaselineName = "kafkajsonl"
	kafkaBatch        = 10000
)

// Kafka measures the kafka connector against the raw franz-go client on an in-process
// Kafka (kfake: the real protocol on a loopback port, run by this program): --rows
// messages Kafka → JSONL and JSONL → Kafka, each beside a franz-go program doing the same.
func Kafka() harness.Suite {
	return harness.Suite{
		Name: "kafka",
		Description: "sluice run Kafka → JSONL and JSONL → Kafka on an in-process kfake cluster vs a raw franz-go " +
			"program (rows/s, peak RSS)",
		Table: measureKafka,
	}
}

// kafkaRow is one measured command.
type kafkaRow struct {
	label  string
	sample harness.Sample
	base   int // index of the row this one is compared with; -1 for a baseline
}

func measureKafka(ctx context.Context, env *harness.Env) (harness.Table, error) {
	cluster, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(kafkaPartitions, kafkaInTopic))
	if err != nil {
		return harness.Table{}, fmt.Errorf("start kfake: %w", err)
	}
	defer cluster.Close()
	broker := cluster.ListenAddrs()[0]
	baseline, err := env.Build(ctx, kafkaBaselinePkg, kafkaBaselineName)
	if err != nil {
		return harness.Table{}, err
	}
	if err := seedKafka(ctx, env, broker); err != nil {
		return harness.Table{}, err
	}
	env.Note("Each row is one process against a kfake cluster (%d partitions) run inside sluice-bench; the baseline is "+
		"tests/bench/baseline/kafkajsonl (franz-go alone: values copied as lines, no decoding); every output's row count is verified.", kafkaPartitions)
	env.Note("JSON objects pass through as lines, each checked (Kafka → JSONL reads the partitions one after another, the next fetched ahead); JSONL → Kafka (a full read) hands the file source's pages of 10,000 to the producer without waiting per page and awaits every acknowledgement at the end.")

	var rows []kafkaRow
	run := func(label string, base int, c harness.Command, count func() (int64, error)) error {
		env.Progress("%s", label)
		s, err := harness.Measure(ctx, c)
		if err != nil {
			return fmt.Errorf("%s: %w", label, err)
		}
		n, err := count()
		if err != nil {
			return fmt.Errorf("%s: count: %w", label, err)
		}
		if n != env.Rows {
			return fmt.Errorf("%s: the output holds %d rows, want %d", label, n, env.Rows)
		}
		rows = append(rows, kafkaRow{label: label, sample: s, base: base})
		return nil
	}

	// Kafka → JSONL.
	out := "kafka-out.jsonl"
	if err := env.RemoveOutputs(out, "kafka-base.jsonl"); err != nil {
		return harness.Table{}, err
	}
	if err := run("baseline Kafka → JSONL (franz-go)", -1,
		harness.Command{Argv: []string{baseline, "consume", broker, kafkaInTopic, "kafka-base.jsonl"}, Dir: env.Dir},
		func() (int64, error) { return harness.CountLines(env.Path("kafka-base.jsonl")) }); err != nil {
		return harness.Table{}, err
	}
	name, err := env.WritePipeline(harness.Pipeline{Name: "bench-kafka-jsonl",
		Source: kafkaConnector(broker, kafkaInTopic, true), Sink: file(out)})
	if err != nil {
		return harness.Table{}, err
	}
	if err := run("Kafka → JSONL", 0, env.SluiceRun(name), func() (int64, error) { return harness.CountLines(env.Path(out)) }); err != nil {
		return harness.Table{}, err
	}

	// JSONL → Kafka, each into a fresh topic.
	adm, closeAdm, err := kafkaAdmin(broker)
	if err != nil {
		return harness.Table{}, err
	}
	defer closeAdm()
	fresh := func(topic string) error {
		_, err := adm.CreateTopic(ctx, kafkaPartitions, 1, nil, topic)
		return err
	}
	if err := fresh("out-base"); err != nil {
		return harness.Table{}, err
	}
	if err := run("baseline JSONL → Kafka (franz-go)", -1,
		harness.Command{Argv: []string{baseline, "produce", broker, "out-base", kafkaInput}, Dir: env.Dir},
		func() (int64, error) { return topicSize(ctx, adm, "out-base") }); err != nil {
		return harness.Table{}, err
	}
	if err := fresh("out"); err != nil {
		return harness.Table{}, err
	}
	name, err = env.WritePipeline(harness.Pipeline{Name: "bench-jsonl-kafka", Source: file(kafkaInput), Sink: kafkaConnector(broker, "out", false)})
	if err != nil {
		return harness.Table{}, err
	}
	if err := run("JSONL → Kafka", 2, env.SluiceRun(name), func() (int64, error) { return topicSize(ctx, adm, "out") }); err != nil {
		return harness.Table{}, err
	}
	if !env.Keep {
		if err := env.RemoveOutputs(out, "kafka-base.jsonl", kafkaInput); err != nil {
			return harness.Table{}, err
		}
	}
	return kafkaTable(env.Rows, rows), nil
}

func kafkaTable(n int64, rows []kafkaRow) harness.Table {
	t := harness.Table{Columns: []string{"pipeline", "rows", "seconds", "rows/s", "peak RSS MiB", "vs franz-go (%)"}}
	rate := func(s harness.Sample) float64 { return float64(n) / s.Wall.Seconds() }
	for _, r := range rows {
		vs := "baseline"
		if r.base >= 0 {
			vs = strconv.FormatFloat(100*rate(r.sample)/rate(rows[r.base].sample), 'f', 0, 64)
		}
		t.Rows = append(t.Rows, []string{r.label, strconv.FormatInt(n, 10), strconv.FormatFloat(r.sample.Wall.Seconds(), 'f', 2, 64),
			strconv.FormatFloat(rate(r.sample), 'f', 0, 64), strconv.FormatFloat(float64(r.sample.PeakRSSKiB)/1024, 'f', 1, 64), vs})
	}
	return t
}

// kafkaConnector is a kafka source or sink block; a source reads pages of kafkaBatch.
func kafkaConnector(broker, topic string, source bool) harness.Connector {
	c := map[string]any{"brokers": []string{broker}, "topic": topic}
	if source {
		c["batch_size"] = kafkaBatch
	}
	return harness.Connector{Type: "kafka", Config: c}
}

func kafkaAdmin(broker string) (*kadm.Client, func(), error) {
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		return nil, nil, err
	}
	return kadm.NewClient(cl), cl.Close, nil
}

// topicSize is the number of messages in topic (its end offsets added up).
func topicSize(ctx context.Context, adm *kadm.Client, topic string) (int64, error) {
	ends, err := adm.ListEndOffsets(ctx, topic)
	if err != nil {
		return 0, err
	}
	var n int64
	ends.Each(func(o kadm.ListedOffset) { n += o.Offset })
	return n, nil
}

// seedKafka writes --rows JSON objects to the input JSONL file and to the input topic.
func seedKafka(ctx context.Context, env *harness.Env, broker string) error {
	env.Progress("writing %d messages to topic %s and %s", env.Rows, kafkaInTopic, kafkaInput)
	f, err := os.Create(env.Path(kafkaInput))
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.DefaultProduceTopic(kafkaInTopic), kgo.MaxBufferedRecords(100000))
	if err != nil {
		return err
	}
	defer cl.Close()
	var mu sync.Mutex
	var failed error
	for i := int64(1); i <= env.Rows; i++ {
		line := fmt.Appendf(nil, `{"id":%d,"name":"name-%d","amount":%d.25,"active":%t,"created_at":"2025-01-01T00:00:00Z"}`,
			i, i, i%1000, i%2 == 0)
		if _, err := w.Write(append(line, '\n')); err != nil {
			return err
		}
		cl.Produce(ctx, &kgo.Record{Value: line}, func(_ *kgo.Record, err error) {
			if err != nil {
				mu.Lock()
				failed = err
				mu.Unlock()
			}
		})
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	if failed != nil {
		return fmt.Errorf("seed topic %s: %w", kafkaInTopic, failed)
	}
	return w.Flush()
}
