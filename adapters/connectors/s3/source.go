package s3

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"path"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/format"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/shard"
)

const readBuffer = 1 << 20

// object is one key to read.
type object struct {
	key  string
	size int64
	etag string
}

type source struct {
	st     *store
	opts   format.Options
	scan   *format.Scanner
	ctx    context.Context // lifetime of bodies and ranged reads, cancelled by Close
	cancel context.CancelFunc
}

// open parses the config and builds the store of a request.
func open(ctx context.Context, role pipeline.Role, c map[string]any, r execute.Reach) (options, *store, error) {
	o, kerr := parse(role, c)
	if kerr != nil {
		return o, nil, fmt.Errorf("s3: %w", kerr)
	}
	if o.bucket == "" {
		return o, nil, fmt.Errorf("s3: config key \"path\" is required")
	}
	st, err := newStore(ctx, execute.ReachOf(r), o)
	return o, st, err
}

// OpenSource lists the keys the glob matches (the shard's share of them); objects are
// opened one at a time as pages are read.
func (c *Connector) OpenSource(ctx context.Context, req execute.ReadRequest) (execute.Source, error) {
	o, st, err := open(ctx, pipeline.RoleSource, req.Config, req.Reach)
	if err != nil {
		return nil, err
	}
	batch, err := cfg.BatchSize(req.BatchSize, req.Config)
	if err != nil {
		return nil, fmt.Errorf("s3: %w", err)
	}
	objs, err := st.list(ctx, o.prefix)
	if err != nil {
		return nil, err
	}
	if objs, err = narrow(objs, req.Shard); err != nil {
		return nil, err
	}
	s := &source{st: st, opts: o.format}
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	inputs := make([]format.Object, len(objs))
	for i, obj := range objs {
		inputs[i] = format.Object{Name: st.url(obj.key), Open: func() (format.Reader, error) { return s.open(obj) }}
	}
	if s.scan, err = format.NewScanner(Type, inputs, batch, req.Incremental); err != nil {
		s.cancel()
		return nil, err
	}
	return s, nil
}

// list returns the objects whose keys match glob, in key order. Listing starts at the
// glob's literal prefix; a glob without pattern characters names one key (or, ending in
// "/", every key under it).
func (s *store) list(ctx context.Context, glob string) ([]object, error) {
	prefix := glob
	if i := strings.IndexAny(glob, "*?["); i >= 0 {
		prefix = glob[:i]
		if _, err := path.Match(glob, ""); err != nil {
			return nil, fmt.Errorf("s3: config key \"path\": bad glob pattern %q: %w", glob, err)
		}
	}
	var out []object
	var token *string
	for {
		var page *s3.ListObjectsV2Output
		err := s.do(ctx, "list "+s.url(prefix), func(ctx context.Context) error {
			var err error
			page, err = s.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{
				Bucket: aws.String(s.bucket), Prefix: aws.String(prefix), ContinuationToken: token,
			})
			return err
		})
		if err != nil {
			return nil, err
		}
		for _, o := range page.Contents {
			key := aws.ToString(o.Key)
			if strings.HasSuffix(key, "/") || isMarker(key) || !matches(glob, key) {
				continue
			}
			out = append(out, object{key: key, size: aws.ToInt64(o.Size), etag: aws.ToString(o.ETag)})
		}
		if !aws.ToBool(page.IsTruncated) || page.NextContinuationToken == nil {
			break
		}
		token = page.NextContinuationToken
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("s3: no objects match %s", s.url(glob))
	}
	slices.SortFunc(out, func(a, b object) int { return strings.Compare(a.key, b.key) })
	return out, nil
}

// matches applies a glob to a key: `*` and `?` stay within one path segment; a glob
// without pattern characters matches itself, or every key under it when it ends in "/"
// or is empty.
func matches(glob, key string) bool {
	if !hasGlob(glob) {
		return key == glob || (glob == "" || strings.HasSuffix(glob, "/")) && strings.HasPrefix(key, glob)
	}
	ok, _ := path.Match(glob, key)
	return ok
}

// open starts reading one object.
func (s *source) open(obj object) (format.Reader, error) {
	name := s.st.url(obj.key)
	if s.opts.Format == format.Parquet {
		ra := &rangeReader{st: s.st, ctx: s.ctx, key: obj.key, etag: obj.etag, size: obj.size}
		return format.NewParquetReader(ra, obj.size, nil, name)
	}
	body := &bodyReader{st: s.st, ctx: s.ctx, key: obj.key, etag: obj.etag}
	if err := body.reopen(); err != nil {
		return nil, err
	}
	br := bufio.NewReaderSize(body, readBuffer)
	if s.opts.Format == format.CSV {
		r, err := format.NewCSVReader(br, body, name, s.opts.CSV)
		if err != nil {
			body.Close()
			return nil, err
		}
		return r, nil
	}
	return format.NewJSONLReader(br, body, name), nil
}

func (s *source) Next(ctx context.Context) (*execute.Page, error) {
	// A cancelled read also aborts a body or ranged GET blocked in the network.
	stop := context.AfterFunc(ctx, s.cancel)
	defer stop()
	return s.scan.Next(ctx)
}

func (s *source) Close() error {
	s.cancel()
	return s.scan.Close()
}

// PlanShards plans n hash buckets over the keys the glob matches now, weighed by their
// bytes (SPEC §6.2, Mode B): every member hashes the same keys the same way.
func (c *Connector) PlanShards(ctx context.Context, req execute.ReadRequest, n int) ([]execute.ShardSlice, error) {
	_, st, err := open(ctx, pipeline.RoleSource, req.Config, req.Reach)
	if err != nil {
		return nil, err
	}
	o, _ := parse(pipeline.RoleSource, req.Config)
	objs, err := st.list(ctx, o.prefix)
	if err != nil {
		return nil, err
	}
	out := make([]execute.ShardSlice, n)
	for i := range out {
		out[i] = execute.ShardSlice{Index: i, Count: n}
	}
	for _, obj := range objs {
		out[shard.HashBucket(obj.key, n)].Weight += max(obj.size, 1)
	}
	return out, nil
}

// narrow keeps the objects of one hash bucket.
func narrow(objs []object, sh *execute.ShardSlice) ([]object, error) {
	if sh == nil {
		return objs, nil
	}
	if sh.Range != nil {
		return nil, fmt.Errorf("s3: an s3 source is split by key hash; this shard has a key range")
	}
	out := objs[:0:0]
	for _, o := range objs {
		if shard.HashBucket(o.key, sh.Count) == sh.Index {
			out = append(out, o)
		}
	}
	return out, nil
}

var _ execute.ShardPlanner = (*Connector)(nil)

var _ io.Closer = (*bodyReader)(nil)
