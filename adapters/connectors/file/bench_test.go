package file_test

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sluicehq/sluice/adapters/connectors/file"
	"github.com/sluicehq/sluice/application/execute"
)

const benchRows = 100_000

func benchInput(b *testing.B) string {
	b.Helper()
	dir := b.TempDir()
	p := filepath.Join(dir, "in.csv")
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "id,name,email,amount,created_at,status,city,note")
	for i := range benchRows {
		fmt.Fprintf(w, "%d,Customer %d,c%d@example.com,%d.%02d,2025-01-%02dT10:00:00Z,active,Berlin,\"a note, with comma\"\n",
			i, i, i, i%1000, i%100, i%28+1)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return p
}

// BenchmarkCSVToJSONL moves a CSV file into a JSONL file through the connector.
func BenchmarkCSVToJSONL(b *testing.B) {
	in := benchInput(b)
	out := filepath.Join(filepath.Dir(in), "out.jsonl")
	c := file.New()
	for b.Loop() {
		src, err := c.OpenSource(context.Background(), execute.ReadRequest{Config: map[string]any{"path": in}})
		if err != nil {
			b.Fatal(err)
		}
		snk, err := c.OpenSink(context.Background(), execute.WriteRequest{Config: map[string]any{"path": out, "write_mode": "overwrite"}})
		if err != nil {
			b.Fatal(err)
		}
		for {
			p, err := src.Next(context.Background())
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if err := snk.Write(context.Background(), p); err != nil {
				b.Fatal(err)
			}
		}
		if err := snk.Commit(context.Background()); err != nil {
			b.Fatal(err)
		}
		src.Close()
	}
	b.ReportMetric(float64(b.N)*benchRows/b.Elapsed().Seconds(), "rows/s")
}

// BenchmarkCSVToJSONLBaseline is the plain standard-library loop the connector is
// measured against: encoding/csv records marshalled by encoding/json.
func BenchmarkCSVToJSONLBaseline(b *testing.B) {
	in := benchInput(b)
	out := filepath.Join(filepath.Dir(in), "base.jsonl")
	for b.Loop() {
		f, _ := os.Open(in)
		o, _ := os.Create(out)
		r := csv.NewReader(bufio.NewReaderSize(f, 1<<20))
		w := bufio.NewWriterSize(o, 1<<20)
		header, _ := r.Read()
		for {
			rec, err := r.Read()
			if err != nil {
				break
			}
			obj := make(map[string]string, len(header))
			for i, h := range header {
				obj[h] = rec[i]
			}
			line, _ := json.Marshal(obj)
			w.Write(line)
			w.WriteByte('\n')
		}
		w.Flush()
		o.Sync()
		o.Close()
		f.Close()
	}
	b.ReportMetric(float64(b.N)*benchRows/b.Elapsed().Seconds(), "rows/s")
}

func TestBenchInputShape(t *testing.T) {
	t.Parallel()
	// Keeps the benchmark's CSV honest: it must parse with the connector.
	dir := t.TempDir()
	write(t, dir, "b.csv", "id,note\n1,\"a note, with comma\"\n")
	pages, err := readPages(t, file.New(), execute.ReadRequest{Config: map[string]any{"path": "b.csv"}, BaseDir: dir})
	if err != nil || len(pages) != 1 || !strings.Contains(pages[0].Rows[0][1].(string), ",") {
		t.Fatalf("unexpected: %v %v", pages, err)
	}
}
