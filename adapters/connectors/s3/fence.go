package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/google/uuid"

	"github.com/sluicehq/sluice/domain/run"
)

// writerFence keeps a stale writer of a run's shard from completing its uploads over the
// objects of the member that took the run over (its lease lost, the run reclaimed). The
// object names are deterministic per (run, shard, part), so both writers aim at the same
// keys, and S3 has no transaction to put an epoch in; the bucket itself holds the fence:
//
//   - Opening takes the fence: the writer puts its own token into the shard's marker
//     object (last opener wins, as Fence's epoch increment does for SQL sinks), then
//     aborts every multipart upload already open under the shard's names — those are an
//     older writer's, whose parts can then never be completed.
//   - Commit checks the marker still holds its token before completing any upload, and
//     completes nothing (aborting its uploads) when a newer writer took the marker.
//
// Why that is enough: a stale writer's uploads all start before its commit check. If the
// newer writer took the marker before that check, the check refuses; if after, the newer
// writer's open aborts whatever the stale one has not completed yet, and whatever it did
// complete the newer writer overwrites at its own (later) commit.
//
// A run without an id (`sluice run`) writes under a fresh name every time: nothing to fence.
type writerFence struct {
	key    string // the marker object; "" when there is nothing to fence
	token  string
	prefix string // the names of the shard's objects start with it
}

// markerKey names the marker of a shard's objects: beside them, with the leading
// underscore that Spark, Hive and friends treat as "not data".
func markerKey(base string) string {
	dir := base[:strings.LastIndex(base, "/")+1]
	shard := strings.TrimSuffix(base[len(dir):], "-")
	return dir + markerPrefix + strings.TrimPrefix(shard, "part-")
}

// markerPrefix starts the base name of every writer marker.
const markerPrefix = "_sluice-writer-"

// isMarker reports whether key is a writer marker, which a source never reads as data.
func isMarker(key string) bool {
	return strings.HasPrefix(key[strings.LastIndex(key, "/")+1:], markerPrefix)
}

// takeFence makes this writer the newest of base's objects (see writerFence).
func takeFence(ctx context.Context, st *store, base string, named bool) (*writerFence, error) {
	if !named {
		return &writerFence{}, nil
	}
	f := &writerFence{key: markerKey(base), token: uuid.Must(uuid.NewV7()).String(), prefix: base}
	err := st.do(ctx, "PUT "+st.url(f.key), func(ctx context.Context) error {
		_, err := st.client.PutObject(ctx, &s3.PutObjectInput{
			Bucket: aws.String(st.bucket), Key: aws.String(f.key), Body: strings.NewReader(f.token),
			ContentLength: aws.Int64(int64(len(f.token))), ContentType: aws.String("text/plain"),
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%w (the writer marker that fences older writers of the run)", err)
	}
	older, err := listUploads(ctx, st, base)
	if err != nil {
		return nil, err
	}
	for _, up := range older {
		err := st.do(ctx, "abort an older writer's upload of "+st.url(aws.ToString(up.Key)), func(ctx context.Context) error {
			_, err := st.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
				Bucket: aws.String(st.bucket), Key: up.Key, UploadId: up.UploadId,
			})
			if isNoSuchUpload(err) {
				return nil // that writer aborted or completed it meanwhile
			}
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	return f, nil
}

// listUploads lists the multipart uploads open under prefix, every page of them.
func listUploads(ctx context.Context, st *store, prefix string) ([]types.MultipartUpload, error) {
	var all []types.MultipartUpload
	in := &s3.ListMultipartUploadsInput{Bucket: aws.String(st.bucket), Prefix: aws.String(prefix)}
	for {
		var out *s3.ListMultipartUploadsOutput
		err := st.do(ctx, "list uploads under "+st.url(prefix), func(ctx context.Context) error {
			var err error
			out, err = st.client.ListMultipartUploads(ctx, in)
			if isNoSuchUpload(err) {
				// Some S3-compatible stores (gofakes3) answer so for a bucket that never
				// had an upload: there is nothing to list.
				out, err = &s3.ListMultipartUploadsOutput{}, nil
			}
			return err
		})
		if err != nil {
			return nil, err
		}
		all = append(all, out.Uploads...)
		if !aws.ToBool(out.IsTruncated) || (out.NextKeyMarker == nil && out.NextUploadIdMarker == nil) {
			return all, nil
		}
		in.KeyMarker, in.UploadIdMarker = out.NextKeyMarker, out.NextUploadIdMarker
	}
}

// check refuses, wrapping run.ErrLeaseLost, when a newer writer took the marker (or
// released it: a missing marker is as good as a foreign one).
func (f *writerFence) check(ctx context.Context, st *store) error {
	if f.key == "" {
		return nil
	}
	held, err := f.holder(ctx, st)
	if err != nil {
		return err
	}
	if !bytes.Equal(held, []byte(f.token)) {
		return fmt.Errorf("s3: %s: another writer of this run's objects started after this one (the run was taken over); "+
			"completing nothing: %w", st.url(f.key), run.ErrLeaseLost)
	}
	return nil
}

// release deletes the marker once the writer is done, unless a newer writer holds it.
// Between the read and the delete a newer writer may take the marker; it then finds it
// missing at its commit and fails as if fenced, which a retry of the run repairs — never
// the other way round, so no stale object can come of it.
func (f *writerFence) release(ctx context.Context, st *store) error {
	if f.key == "" {
		return nil
	}
	held, err := f.holder(ctx, st)
	if err != nil || !bytes.Equal(held, []byte(f.token)) {
		return err
	}
	return st.do(ctx, "DELETE "+st.url(f.key), func(ctx context.Context) error {
		_, err := st.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(st.bucket), Key: aws.String(f.key)})
		return err
	})
}

// wrap marks the loss of one of this writer's own uploads (a newer writer aborted it) as
// a lost fence.
func (f *writerFence) wrap(err error) error {
	if f.key != "" && isNoSuchUpload(err) {
		return fmt.Errorf("%w (aborted by a newer writer of the run: %w)", err, run.ErrLeaseLost)
	}
	return err
}

// holder reads the token in the marker; nil when there is no marker.
func (f *writerFence) holder(ctx context.Context, st *store) ([]byte, error) {
	var held []byte
	err := st.do(ctx, "GET "+st.url(f.key), func(ctx context.Context) error {
		out, err := st.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(st.bucket), Key: aws.String(f.key)})
		if isNoSuchKey(err) {
			held = nil
			return nil
		}
		if err != nil {
			return err
		}
		defer out.Body.Close()
		held, err = io.ReadAll(io.LimitReader(out.Body, 256))
		return err
	})
	return held, err
}

func isNoSuchKey(err error) bool {
	var nk *types.NoSuchKey
	return errors.As(err, &nk) || apiCode(err) == "NoSuchKey"
}

func isNoSuchUpload(err error) bool {
	var nu *types.NoSuchUpload
	return errors.As(err, &nu) || apiCode(err) == "NoSuchUpload"
}

// apiCode is the store's error code, "" for other errors.
func apiCode(err error) string {
	type coded interface{ ErrorCode() string }
	var c coded
	if errors.As(err, &c) {
		return c.ErrorCode()
	}
	return ""
}
