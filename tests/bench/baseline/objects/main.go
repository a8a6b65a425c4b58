package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/format"
)

const rowGroupRows = 100_000

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	ctx := context.Background()
	var err error
	switch a := os.Args[2:]; os.Args[1] {
	case "csv2parquet":
		need(a, 2)
		err = csv2parquet(a[0], a[1])
	case "parquet2jsonl":
		need(a, 2)
		err = parquet2jsonl(a[0], a[1])
	case "pg2s3":
		need(a, 7)
		err = pg2s3(ctx, a[0], a[1], client(a[2], a[3], a[4]), a[5], a[6])
	case "s32pg":
		need(a, 7)
		err = s32pg(ctx, client(a[0], a[1], a[2]), a[3], a[4], a[5], a[6])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "objects:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: objects csv2parquet|parquet2jsonl|pg2s3|s32pg ARGS… (see doc.go)")
	os.Exit(2)
}

func need(args []string, n int) {
	if len(args) != n {
		usage()
	}
}

func client(endpoint, keyID, secret string) *s3.Client {
	return s3.New(s3.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(endpoint), UsePathStyle: true,
		Credentials:                credentials.NewStaticCredentialsProvider(keyID, secret, ""),
		RequestChecksumCalculation: aws.RequestChecksumCalculationWhenRequired,
		ResponseChecksumValidation: aws.ResponseChecksumValidationWhenRequired,
	})
}

func writerOptions() []parquet.WriterOption {
	return []parquet.WriterOption{parquet.Compression(&zstd.Codec{Level: zstd.SpeedDefault, Concurrency: 1}),
		parquet.MaxRowsPerRowGroup(rowGroupRows)}
}

// csv2parquet writes every CSV field as an optional string column.
func csv2parquet(in, out string) error {
	src, err := os.Open(in)
	if err != nil {
		return err
	}
	defer src.Close()
	r := csv.NewReader(bufio.NewReaderSize(src, 1<<20))
	header, err := r.Read()
	if err != nil {
		return err
	}
	group := parquet.Group{}
	for _, h := range header {
		group[h] = parquet.Optional(parquet.String())
	}
	schema := parquet.NewSchema("rows", group)
	// The group orders columns by name; col maps a CSV field onto its column index.
	col := make([]int, len(header))
	for i, h := range header {
		leaf, _ := schema.Lookup(h)
		col[i] = leaf.ColumnIndex
	}
	dst, err := os.Create(out)
	if err != nil {
		return err
	}
	w := parquet.NewWriter(dst, append([]parquet.WriterOption{schema}, writerOptions()...)...)
	batch := make([]parquet.Row, 0, 1024)
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		row := make(parquet.Row, len(rec))
		for i, f := range rec {
			row[col[i]] = parquet.ByteArrayValue([]byte(f)).Level(0, 1, col[i])
		}
		if batch = append(batch, row); len(batch) == cap(batch) {
			if _, err := w.WriteRows(batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if _, err := w.WriteRows(batch); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return err
	}
	return dst.Close()
}

// parquet2jsonl decodes each row into a map and encodes it with encoding/json.
func parquet2jsonl(in, out string) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		return err
	}
	dst, err := os.Create(out)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(dst, 1<<20)
	enc := json.NewEncoder(bw)
	fields := pf.Schema().Fields()
	buf := make([]parquet.Row, 1024)
	for _, g := range pf.RowGroups() {
		rows := g.Rows()
		for {
			n, err := rows.ReadRows(buf)
			for _, row := range buf[:n] {
				obj := make(map[string]any, len(fields))
				for i, fld := range fields {
					obj[fld.Name()] = goValue(fld.Type(), row[i])
				}
				if err := enc.Encode(obj); err != nil {
					return err
				}
			}
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
		}
		rows.Close()
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return dst.Close()
}

func goValue(t parquet.Type, v parquet.Value) any {
	if v.IsNull() {
		return nil
	}
	switch v.Kind() {
	case parquet.Boolean:
		return v.Boolean()
	case parquet.Int32:
		return v.Int32()
	case parquet.Int64:
		if lt := t.LogicalType(); lt != nil {
			if ts, ok := lt.Value.(*format.TimestampType); ok {
				return time.Unix(0, v.Int64()*int64(ts.Unit.Value.Duration())).UTC()
			}
		}
		return v.Int64()
	case parquet.Double:
		return v.Double()
	case parquet.Float:
		return v.Float()
	}
	return string(v.ByteArray())
}
