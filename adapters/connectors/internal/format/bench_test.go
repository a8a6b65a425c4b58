package format_test

import (
	"io"
	"strconv"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"

	"github.com/sluicehq/sluice/adapters/connectors/internal/format"
	"github.com/sluicehq/sluice/application/execute"
)

// BenchmarkParquetWriteStrings writes CSV-like pages (every value a string) as Parquet.
func BenchmarkParquetWriteStrings(b *testing.B) {
	cols := []string{"id", "name", "amount", "active", "created_at"}
	rows := make([][]any, 10000)
	for i := range rows {
		rows[i] = []any{strconv.Itoa(i), "name-" + strconv.Itoa(i), strconv.Itoa(i) + ".25", "true", "2025-01-01T00:00:00Z"}
	}
	p := &execute.Page{Columns: cols, Rows: rows}
	b.ReportAllocs()
	for b.Loop() {
		w, err := format.NewWriter(io.Discard, format.Options{Format: format.Parquet, Compression: format.Zstd, RowGroupRows: 100000}, nil)
		if err != nil {
			b.Fatal(err)
		}
		for range 10 {
			if err := w.Write(p); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkParquetWriteStringsRaw is the same with parquet-go alone, for comparison.
func BenchmarkParquetWriteStringsRaw(b *testing.B) {
	cols := []string{"id", "name", "amount", "active", "created_at"}
	group := parquet.Group{}
	for _, c := range cols {
		group[c] = parquet.Optional(parquet.String())
	}
	schema := parquet.NewSchema("rows", group)
	recs := make([][]string, 10000)
	for i := range recs {
		recs[i] = []string{strconv.Itoa(i), "name-" + strconv.Itoa(i), strconv.Itoa(i) + ".25", "true", "2025-01-01T00:00:00Z"}
	}
	b.ReportAllocs()
	for b.Loop() {
		w := parquet.NewWriter(io.Discard, schema, parquet.Compression(&zstd.Codec{Level: zstd.SpeedDefault, Concurrency: 1}),
			parquet.MaxRowsPerRowGroup(100000))
		for range 10 {
			batch := make([]parquet.Row, 0, len(recs))
			for _, rec := range recs {
				row := make(parquet.Row, len(rec))
				for i, f := range rec {
					row[i] = parquet.ByteArrayValue([]byte(f)).Level(0, 1, i)
				}
				batch = append(batch, row)
			}
			if _, err := w.WriteRows(batch); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
