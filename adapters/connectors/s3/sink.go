package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/google/uuid"

	"github.com/sluicehq/sluice/adapters/connectors/internal/format"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// upload is one object being written: a multipart upload whose parts are sent as the
// part buffer fills, completed only on Commit.
type upload struct {
	key   string
	id    string
	parts []types.CompletedPart
}

type sink struct {
	st       *store
	opts     options
	base     string // key prefix of this run's objects: <prefix><run>/part-<shard>-
	partSize int64
	fence    *writerFence

	cur     *upload
	w       format.Writer
	buf     bytes.Buffer
	rows    int64 // rows in the current object
	next    int   // number of the next object
	pending []*upload
	err     error
	done    bool
}

// OpenSink checks that the bucket answers (so a wrong bucket or credentials fail before
// any row is read) and prepares this run's object names.
func (c *Connector) OpenSink(ctx context.Context, req execute.WriteRequest) (execute.Sink, error) {
	o, st, err := open(ctx, pipeline.RoleSink, req.Config, req.Reach)
	if err != nil {
		return nil, err
	}
	if err := st.do(ctx, "HEAD "+st.url(""), func(ctx context.Context) error {
		_, err := st.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: aws.String(st.bucket)})
		return err
	}); err != nil {
		return nil, err
	}
	base := objectBase(o.prefix, req.Run, req.Shard)
	fence, err := takeFence(ctx, st, base, req.Run != "")
	if err != nil {
		return nil, err
	}
	return &sink{st: st, opts: o, base: base, partSize: c.partSize, fence: fence}, nil
}

// objectBase is the deterministic start of every object name of a run's shard: the
// same (run, shard) names the same objects, so a re-execution overwrites them. A run
// without an id (`sluice run`) is a new run every time.
func objectBase(prefix, run string, sh *execute.ShardSlice) string {
	if prefix != "" && !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	id, _, _ := strings.Cut(run, "::")
	if id == "" {
		id = uuid.Must(uuid.NewV7()).String()
	}
	index := 0
	if sh != nil {
		index = sh.Index
	}
	return fmt.Sprintf("%s%s/part-%04d-", prefix, id, index)
}

func (s *sink) Write(ctx context.Context, p *execute.Page) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("s3: %w", err)
	}
	if s.done {
		return fmt.Errorf("s3: write after the sink was finished")
	}
	if s.err != nil {
		return s.err
	}
	if err := s.write(ctx, p); err != nil {
		s.err = err
		return err
	}
	return nil
}

func (s *sink) write(ctx context.Context, p *execute.Page) error {
	for start := 0; start < len(p.Rows); {
		if s.cur == nil {
			if err := s.begin(ctx); err != nil {
				return err
			}
		}
		end := len(p.Rows)
		if s.opts.maxRows > 0 {
			end = min(end, start+int(s.opts.maxRows-s.rows))
		}
		part := &execute.Page{Columns: p.Columns, Rows: p.Rows[start:end]}
		if err := s.w.Write(part); err != nil {
			return fmt.Errorf("s3: %s: %w", s.st.url(s.cur.key), err)
		}
		s.rows += int64(end - start)
		start = end
		if err := s.flush(ctx, false); err != nil {
			return err
		}
		if s.opts.maxRows > 0 && s.rows >= s.opts.maxRows {
			if err := s.finishObject(ctx); err != nil {
				return err
			}
		}
	}
	return nil
}

// begin starts the next object's multipart upload.
func (s *sink) begin(ctx context.Context) error {
	key := fmt.Sprintf("%s%05d%s", s.base, s.next, format.Extension(s.opts.format.Format))
	s.next++
	up := &upload{key: key}
	err := s.st.do(ctx, "start upload "+s.st.url(key), func(ctx context.Context) error {
		out, err := s.st.client.CreateMultipartUpload(ctx, &s3.CreateMultipartUploadInput{
			Bucket: aws.String(s.st.bucket), Key: aws.String(key), ContentType: aws.String(contentType(s.opts.format.Format)),
		})
		if err != nil {
			return err
		}
		up.id = aws.ToString(out.UploadId)
		return nil
	})
	if err != nil {
		return err
	}
	s.cur, s.rows = up, 0
	s.pending = append(s.pending, up)
	s.buf.Reset()
	w, err := format.NewWriter(&s.buf, s.opts.format, nil)
	if err != nil {
		return fmt.Errorf("s3: %w", err)
	}
	s.w = w
	return nil
}

func contentType(f string) string {
	switch f {
	case format.CSV:
		return "text/csv"
	case format.JSONL:
		return "application/x-ndjson"
	}
	return "application/vnd.apache.parquet"
}

// flush uploads the part buffer once it holds a full part (or, at the end of an object,
// whatever it holds).
func (s *sink) flush(ctx context.Context, last bool) error {
	if int64(s.buf.Len()) < s.partSize && !(last && (s.buf.Len() > 0 || len(s.cur.parts) == 0)) {
		return nil
	}
	n := int32(len(s.cur.parts) + 1)
	body := s.buf.Bytes()
	err := s.st.do(ctx, fmt.Sprintf("upload part %d of %s", n, s.st.url(s.cur.key)), func(ctx context.Context) error {
		out, err := s.st.client.UploadPart(ctx, &s3.UploadPartInput{
			Bucket: aws.String(s.st.bucket), Key: aws.String(s.cur.key), UploadId: aws.String(s.cur.id),
			PartNumber: aws.Int32(n), Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))),
		})
		if err != nil {
			return err
		}
		s.cur.parts = append(s.cur.parts, types.CompletedPart{ETag: out.ETag, PartNumber: aws.Int32(n)})
		return nil
	})
	s.buf.Reset()
	return s.fence.wrap(err)
}

// finishObject ends the current object's format and uploads its last part; the upload
// itself stays open until Commit.
func (s *sink) finishObject(ctx context.Context) error {
	if err := s.w.Close(); err != nil {
		return fmt.Errorf("s3: %s: %w", s.st.url(s.cur.key), err)
	}
	if err := s.flush(ctx, true); err != nil {
		return err
	}
	s.cur, s.w = nil, nil
	return nil
}

// Commit completes every upload, in order: each object appears whole at that moment.
// Nothing is completed unless this writer is still the run's newest: a stale one (its
// lease lost, the run taken over) must not replace the new owner's objects.
func (s *sink) Commit(ctx context.Context) error {
	if s.done {
		return fmt.Errorf("s3: the sink was already committed or aborted")
	}
	if s.err != nil {
		s.Abort(ctx)
		return fmt.Errorf("s3: not committing after a failed write: %w", s.err)
	}
	if len(s.pending) > 0 {
		if err := s.fence.check(ctx, s.st); err != nil {
			s.abortAll(context.WithoutCancel(ctx), s.pending)
			s.done, s.pending = true, nil
			return err
		}
	}
	if s.cur != nil {
		if err := s.finishObject(ctx); err != nil {
			s.Abort(ctx)
			return err
		}
	}
	s.done = true
	for i, up := range s.pending {
		err := s.st.do(ctx, "complete upload "+s.st.url(up.key), func(ctx context.Context) error {
			_, err := s.st.client.CompleteMultipartUpload(ctx, &s3.CompleteMultipartUploadInput{
				Bucket: aws.String(s.st.bucket), Key: aws.String(up.key), UploadId: aws.String(up.id),
				MultipartUpload: &types.CompletedMultipartUpload{Parts: up.parts},
			})
			return err
		})
		if err != nil {
			s.abortAll(context.WithoutCancel(ctx), s.pending[i+1:])
			return s.fence.wrap(err)
		}
	}
	s.pending = nil
	return s.fence.release(ctx, s.st)
}

// Abort aborts every upload not completed: none of its parts ever becomes visible.
func (s *sink) Abort(ctx context.Context) error {
	s.done = true
	wctx := context.WithoutCancel(ctx)
	err := errors.Join(s.abortAll(wctx, s.pending), s.fence.release(wctx, s.st))
	s.pending, s.cur, s.w = nil, nil, nil
	s.buf = bytes.Buffer{}
	return err
}

func (s *sink) abortAll(ctx context.Context, ups []*upload) error {
	var errs []error
	for _, up := range ups {
		errs = append(errs, s.st.do(ctx, "abort upload "+s.st.url(up.key), func(ctx context.Context) error {
			_, err := s.st.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
				Bucket: aws.String(s.st.bucket), Key: aws.String(up.key), UploadId: aws.String(up.id),
			})
			return err
		}))
	}
	return errors.Join(errs...)
}

func (*sink) Durability() execute.Durability { return execute.AtEnd }
