package main

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"
)

func main() {
	if len(os.Args) != 5 || (os.Args[1] != "consume" && os.Args[1] != "produce") {
		fmt.Fprintln(os.Stderr, "usage: kafkajsonl consume|produce BROKER TOPIC FILE.jsonl")
		os.Exit(2)
	}
	ctx := context.Background()
	var err error
	if os.Args[1] == "consume" {
		err = consume(ctx, os.Args[2], os.Args[3], os.Args[4])
	} else {
		err = produce(ctx, os.Args[2], os.Args[3], os.Args[4])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "kafkajsonl:", err)
		os.Exit(1)
	}
}

func consume(ctx context.Context, broker, topic, out string) error {
	admin, err := kgo.NewClient(kgo.SeedBrokers(broker))
	if err != nil {
		return err
	}
	ends, err := kadm.NewClient(admin).ListEndOffsets(ctx, topic)
	admin.Close()
	if err != nil {
		return err
	}
	want := map[int32]int64{}
	assign := map[int32]kgo.Offset{}
	ends.Each(func(o kadm.ListedOffset) {
		if o.Offset > 0 {
			want[o.Partition] = o.Offset
			assign[o.Partition] = kgo.NewOffset().AtStart()
		}
	})
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumePartitions(map[string]map[int32]kgo.Offset{topic: assign}))
	if err != nil {
		return err
	}
	defer cl.Close()
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	for len(want) > 0 {
		fetches := cl.PollFetches(ctx)
		if errs := fetches.Errors(); len(errs) > 0 {
			return errs[0].Err
		}
		var werr error
		fetches.EachRecord(func(r *kgo.Record) {
			end, ok := want[r.Partition]
			if !ok || r.Offset >= end {
				return
			}
			if _, err := w.Write(r.Value); err != nil && werr == nil {
				werr = err
			}
			if err := w.WriteByte('\n'); err != nil && werr == nil {
				werr = err
			}
			if r.Offset+1 >= end {
				delete(want, r.Partition)
			}
		})
		if werr != nil {
			return werr
		}
	}
	return w.Flush()
}

func produce(ctx context.Context, broker, topic, in string) error {
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.DefaultProduceTopic(topic),
		kgo.RequiredAcks(kgo.AllISRAcks()), kgo.MaxBufferedRecords(50000))
	if err != nil {
		return err
	}
	defer cl.Close()
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	var mu sync.Mutex
	var first error
	done := func(_ *kgo.Record, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err != nil && first == nil {
			first = err
		}
	}
	for sc.Scan() {
		cl.Produce(ctx, &kgo.Record{Value: append([]byte(nil), sc.Bytes()...)}, done)
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if err := cl.Flush(ctx); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	return first
}
