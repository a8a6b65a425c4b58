package s3

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// bodyReader streams one object. A body that breaks off with a transient error is
// resumed from the byte it reached by a ranged GET pinned to the object's ETag, under
// the retry policy, so a dropped connection costs one request, not the run.
type bodyReader struct {
	st   *store
	ctx  context.Context
	key  string
	etag string
	off  int64
	body io.ReadCloser
}

// reopen opens the body at b.off, retrying under the policy.
func (b *bodyReader) reopen() error {
	return b.st.do(b.ctx, "GET "+b.st.url(b.key), b.get)
}

// get is one GET of the body from b.off.
func (b *bodyReader) get(ctx context.Context) error {
	if b.body != nil {
		b.body.Close()
		b.body = nil
	}
	in := &s3.GetObjectInput{Bucket: aws.String(b.st.bucket), Key: aws.String(b.key)}
	if b.etag != "" {
		in.IfMatch = aws.String(b.etag)
	}
	if b.off > 0 {
		in.Range = aws.String(fmt.Sprintf("bytes=%d-", b.off))
	}
	out, err := b.st.client.GetObject(ctx, in)
	if err != nil {
		return err
	}
	b.body = out.Body
	return nil
}

// Read reads from the body; a transient failure reopens it at the byte reached, under
// the retry policy.
func (b *bodyReader) Read(p []byte) (int, error) {
	var n int
	var eof bool
	err := b.st.do(b.ctx, "GET "+b.st.url(b.key), func(ctx context.Context) error {
		if b.body == nil {
			if err := b.get(ctx); err != nil {
				return err
			}
		}
		var err error
		n, err = b.body.Read(p)
		b.off += int64(n)
		switch {
		case errors.Is(err, io.EOF):
			eof = true
		case err != nil && n == 0:
			b.body.Close()
			b.body = nil
			return err
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	if eof {
		return n, io.EOF
	}
	return n, nil
}

func (b *bodyReader) Close() error {
	if b.body == nil {
		return nil
	}
	err := b.body.Close()
	b.body = nil
	return err
}

// rangeReader reads one object by ranged GETs for the Parquet reader: Prefetch loads a
// row group's byte range in one request, and reads inside it are served from memory.
type rangeReader struct {
	st   *store
	ctx  context.Context
	key  string
	etag string
	size int64

	win    []byte
	winOff int64
}

func (r *rangeReader) Prefetch(off, n int64) error {
	r.win = nil // release the previous row group before loading the next
	b, err := r.get(off, n)
	if err != nil {
		return err
	}
	r.win, r.winOff = b, off
	return nil
}

func (r *rangeReader) ReadAt(p []byte, off int64) (int, error) {
	if off >= r.size {
		return 0, io.EOF
	}
	if r.win != nil && off >= r.winOff && off+int64(len(p)) <= r.winOff+int64(len(r.win)) {
		return copy(p, r.win[off-r.winOff:]), nil
	}
	n := min(int64(len(p)), r.size-off)
	b, err := r.get(off, n)
	if err != nil {
		return 0, err
	}
	c := copy(p, b)
	if int64(c) < int64(len(p)) {
		return c, io.EOF
	}
	return c, nil
}

// get reads n bytes at off, retrying the whole range on transient failures.
func (r *rangeReader) get(off, n int64) ([]byte, error) {
	if n <= 0 {
		return nil, nil
	}
	in := &s3.GetObjectInput{
		Bucket: aws.String(r.st.bucket), Key: aws.String(r.key),
		Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, off+n-1)),
	}
	if r.etag != "" {
		in.IfMatch = aws.String(r.etag)
	}
	var buf []byte
	err := r.st.do(r.ctx, "GET "+r.st.url(r.key), func(ctx context.Context) error {
		out, err := r.st.client.GetObject(ctx, in)
		if err != nil {
			return err
		}
		defer out.Body.Close()
		buf = make([]byte, n)
		got, err := io.ReadFull(out.Body, buf)
		if err != nil {
			return err
		}
		buf = buf[:got]
		return nil
	})
	return buf, err
}
