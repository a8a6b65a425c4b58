package file

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/format"
	"github.com/sluicehq/sluice/adapters/connectors/internal/jsonlines"
	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/application/execute"
)

const readBuffer = 1 << 20

// input is one file to read: a local path or a URL.
type input struct {
	path    string
	url     string
	display string
}

type source struct {
	c      *Connector
	client *http.Client
	retry  retry.Policy    // the GET of a URL
	ctx    context.Context // lifetime of HTTP bodies, cancelled by Close
	cancel context.CancelFunc
	opts   format.Options
	scan   *format.Scanner
	// incremental reads keep decoded rows: the cursor is read from them.
	incremental bool
}

// OpenSource resolves the path (glob, URL) and checks the options; files are opened one
// at a time as pages are read.
func (c *Connector) OpenSource(ctx context.Context, req execute.ReadRequest) (execute.Source, error) {
	p, err := cfg.String(req.Config, "path", "")
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	if p == "" {
		return nil, fmt.Errorf("file: config key \"path\" is required")
	}
	s := &source{c: c, incremental: req.Incremental != nil}
	if s.opts, err = format.Parse(req.Config, nameOf(p)); err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	batch, err := cfg.BatchSize(req.BatchSize, req.Config)
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	s.client = c.clientFor(execute.ReachOf(req.Reach))
	if s.retry, err = retry.Parse(req.Config, retry.Default()); err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	inputs, err := c.inputs(ctx, execute.ReachOf(req.Reach), req.BaseDir, p)
	if err != nil {
		return nil, err
	}
	if inputs, err = narrow(inputs, req.Shard); err != nil {
		return nil, err
	}
	if s.opts.Format == format.Parquet && isURL(p) {
		return nil, fmt.Errorf("file: Parquet is read by random access, which an http(s) URL does not offer; download the file, or serve it from an S3-compatible store and use the s3 connector")
	}
	objects := make([]format.Object, len(inputs))
	for i, in := range inputs {
		objects[i] = format.Object{Name: in.display, Open: func() (format.Reader, error) { return s.open(in) }}
	}
	if s.scan, err = format.NewScanner(Type, objects, batch, req.Incremental); err != nil {
		return nil, err
	}
	s.ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	return s, nil
}

// clientFor is the HTTP client a source fetches with. Confined, it dials through the
// Reach, so the dial policy judges every address a URL (or a redirect) resolves to, and
// it never uses a proxy, which would dial the target out of the policy's sight.
func (c *Connector) clientFor(reach execute.Reach) *http.Client {
	if !execute.Confined(reach) {
		return c.client
	}
	tr, ok := c.client.Transport.(*http.Transport)
	if !ok {
		tr = http.DefaultTransport.(*http.Transport)
	}
	tr = tr.Clone()
	tr.Proxy = nil
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		return reach.Dial(ctx, "path", network, addr)
	}
	client := *c.client
	client.Transport = tr
	return &client
}

func (c *Connector) inputs(ctx context.Context, reach execute.Reach, base, p string) ([]input, error) {
	if isURL(p) {
		u, err := url.Parse(p)
		if err != nil || u.Host == "" {
			return nil, fmt.Errorf("file: invalid URL %s", displayPath(p))
		}
		if c.checkURL != nil {
			if err := c.checkURL(ctx, u); err != nil {
				return nil, fmt.Errorf("file: %s refused: %w", displayPath(p), err)
			}
		}
		return []input{{url: p, display: displayPath(p)}}, nil
	}
	// The confinement resolves the path (and a glob's directory) to its real path; each
	// match of a glob is checked again, as it may be a symlink leading elsewhere.
	full, err := reach.Path(ctx, "path", base, p)
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	if !hasGlob(p) {
		st, err := os.Stat(full)
		if err != nil {
			return nil, fmt.Errorf("file: %w", err)
		}
		if st.IsDir() {
			return nil, fmt.Errorf("file: %s is a directory; use a glob such as %s", full, filepath.Join(full, "*.csv"))
		}
		return []input{{path: full, display: full}}, nil
	}
	matches, err := filepath.Glob(full)
	if err != nil {
		return nil, fmt.Errorf("file: bad glob pattern %q: %w", p, err)
	}
	slices.Sort(matches)
	var out []input
	for _, m := range matches {
		real, err := reach.Path(ctx, "path", "", m)
		if err != nil {
			return nil, fmt.Errorf("file: %w", err)
		}
		if st, err := os.Stat(real); err == nil && st.Mode().IsRegular() {
			out = append(out, input{path: real, display: m})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("file: no files match %s", full)
	}
	return out, nil
}

func (s *source) Next(ctx context.Context) (*execute.Page, error) {
	// A cancelled read also aborts an HTTP body blocked in Read.
	stop := context.AfterFunc(ctx, s.cancel)
	defer stop()
	return s.scan.Next(ctx)
}

// Encoding offers JSON lines for a full read of JSONL: each object is checked and passed
// on as written, so a sink that writes JSON objects (a JSONL file, Kafka) skips decoding
// and encoding every row.
func (s *source) Encoding() (execute.Encoding, bool) {
	if s.opts.Format != format.JSONL || s.incremental {
		return execute.Encoding{}, false
	}
	return execute.Encoding{Format: jsonlines.Format}, true
}

// UseEncoding switches to JSON-line pages; it is called before the first Next.
func (s *source) UseEncoding(context.Context) error {
	if _, ok := s.Encoding(); !ok {
		return fmt.Errorf("file: JSON lines are offered only for a full read of JSONL")
	}
	return s.scan.UseLines()
}

func (s *source) open(in input) (format.Reader, error) {
	var rc io.ReadCloser
	if in.url != "" {
		body, err := s.get(in)
		if err != nil {
			return nil, err
		}
		rc = body
	} else {
		f, err := os.Open(in.path)
		if err != nil {
			return nil, err
		}
		if s.opts.Format == format.Parquet {
			st, err := f.Stat()
			if err != nil {
				f.Close()
				return nil, err
			}
			r, err := format.NewParquetReader(f, st.Size(), f, in.display)
			if err != nil {
				f.Close()
				return nil, err
			}
			return r, nil
		}
		rc = f
	}
	br := bufio.NewReaderSize(rc, readBuffer)
	if s.opts.Format == format.CSV {
		r, err := format.NewCSVReader(br, rc, in.display, s.opts.CSV)
		if err != nil {
			rc.Close()
			return nil, err
		}
		return r, nil
	}
	return format.NewJSONLReader(br, rc, in.display), nil
}

// get fetches a URL; a 429, a 5xx or a dropped connection before the body arrives is
// tried again (the retry block).
func (s *source) get(in input) (io.ReadCloser, error) {
	var body io.ReadCloser
	err := retry.Do(s.ctx, s.retry, func(ctx context.Context) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, in.url, nil)
		if err != nil {
			return fmt.Errorf("file: GET %s: invalid request", in.display)
		}
		resp, err := s.client.Do(req)
		if err != nil {
			// url.Error repeats the URL (with its query); report the cause only.
			var ue *url.Error
			if errors.As(err, &ue) {
				err = ue.Err
			}
			return retry.Network(ctx, fmt.Errorf("file: GET %s: %w", in.display, err))
		}
		if resp.StatusCode < 200 || resp.StatusCode > 299 {
			resp.Body.Close()
			return retry.Status(fmt.Errorf("file: GET %s: HTTP status %s", in.display, resp.Status), resp.StatusCode, resp.Header)
		}
		body = resp.Body
		return nil
	})
	return body, err
}

func (s *source) Close() error {
	if s.cancel != nil {
		s.cancel()
	}
	return s.scan.Close()
}
