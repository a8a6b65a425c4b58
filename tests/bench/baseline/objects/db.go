package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/jackc/pgx/v5"
	"github.com/parquet-go/parquet-go"
)

// pg2s3 streams a query's rows into a Parquet object: pgx rows → parquet-go writer → a
// pipe the SDK's upload manager sends as a multipart upload.
func pg2s3(ctx context.Context, pgURL, query string, c *s3.Client, bucket, key string) error {
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	group := parquet.Group{}
	descs := rows.FieldDescriptions()
	for _, d := range descs {
		var n parquet.Node
		switch d.DataTypeOID {
		case 20, 21, 23: // int8, int2, int4
			n = parquet.Int(64)
		case 700, 701: // float4, float8
			n = parquet.Leaf(parquet.DoubleType)
		case 16:
			n = parquet.Leaf(parquet.BooleanType)
		case 1114, 1184:
			n = parquet.Timestamp(parquet.Nanosecond)
		default:
			n = parquet.String()
		}
		group[d.Name] = parquet.Optional(n)
	}
	schema := parquet.NewSchema("rows", group)
	col := make([]int, len(descs))
	for i, d := range descs {
		leaf, _ := schema.Lookup(d.Name)
		col[i] = leaf.ColumnIndex
	}
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		_, err := manager.NewUploader(c).Upload(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key), Body: pr})
		pr.CloseWithError(err)
		done <- err
	}()
	w := parquet.NewWriter(pw, append([]parquet.WriterOption{schema}, writerOptions()...)...)
	batch := make([]parquet.Row, 0, 1024)
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			return err
		}
		row := make(parquet.Row, len(vals))
		for i, v := range vals {
			row[col[i]] = value(v).Level(0, def(v), col[i])
		}
		if batch = append(batch, row); len(batch) == cap(batch) {
			if _, err := w.WriteRows(batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if _, err := w.WriteRows(batch); err != nil {
		return err
	}
	err = w.Close()
	pw.CloseWithError(err)
	return errors.Join(err, <-done)
}

func def(v any) int {
	if v == nil {
		return 0
	}
	return 1
}

func value(v any) parquet.Value {
	switch x := v.(type) {
	case nil:
		return parquet.Value{}
	case int64:
		return parquet.Int64Value(x)
	case int32:
		return parquet.Int64Value(int64(x))
	case float64:
		return parquet.DoubleValue(x)
	case bool:
		return parquet.BooleanValue(x)
	case time.Time:
		return parquet.Int64Value(x.UnixNano())
	case string:
		return parquet.ByteArrayValue([]byte(x))
	}
	return parquet.ByteArrayValue(fmt.Append(nil, v))
}

// s32pg downloads a Parquet object with the SDK's download manager into a temp file,
// reads it with parquet-go and COPYs the rows into table with pgx.
func s32pg(ctx context.Context, c *s3.Client, bucket, key, pgURL, table string) error {
	tmp, err := os.CreateTemp("", "s32pg-*.parquet")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	defer tmp.Close()
	size, err := manager.NewDownloader(c).Download(ctx, tmp, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key)})
	if err != nil {
		return err
	}
	pf, err := parquet.OpenFile(tmp, size)
	if err != nil {
		return err
	}
	fields := pf.Schema().Fields()
	names := make([]string, len(fields))
	for i, f := range fields {
		names[i] = f.Name()
	}
	conn, err := pgx.Connect(ctx, pgURL)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	groups := pf.RowGroups()
	g, buf, at, n := 0, make([]parquet.Row, 1024), 0, 0
	var rows parquet.Rows
	vals := make([]any, len(fields))
	next := func() bool {
		for at >= n {
			if rows == nil {
				if g >= len(groups) {
					return false
				}
				rows = groups[g].Rows()
				g++
			}
			var err error
			n, err = rows.ReadRows(buf)
			at = 0
			if errors.Is(err, io.EOF) {
				rows.Close()
				rows = nil
			} else if err != nil {
				return false
			}
		}
		for i, f := range fields {
			vals[i] = goValue(f.Type(), buf[at][i])
		}
		at++
		return true
	}
	_, err = conn.CopyFrom(ctx, pgx.Identifier(strings.Split(table, ".")), names, pgx.CopyFromFunc(func() ([]any, error) {
		if !next() {
			return nil, nil
		}
		return vals, nil
	}))
	return err
}
