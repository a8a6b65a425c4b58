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
	"github.com/sluicehq/sluice/adapters/connectors/internal/cursor"
	"github.com/sluicehq/sluice/adapters/connectors/internal/retry"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/state"
)

const readBuffer = 1 << 20

// input is one file to read: a local path or a URL.
type input struct {
	path    string
	url     string
	display string
}

// rowReader yields the rows of one file. keys may be reused between calls; vals never is.
type rowReader interface {
	read() (keys []string, vals []any, size int64, err error)
	close() error
}

type source struct {
	c      *Connector
	client *http.Client
	retry  retry.Policy    // the GET of a URL
	ctx    context.Context // lifetime of HTTP bodies, cancelled by Close
	cancel context.CancelFunc
	inputs []input
	next   int // next input to open
	format string
	csv    csvOptions
	batch  int

	cur     rowReader
	curName string
	curCol  int // cursor column's index for CSV (-1: unknown yet)

	incremental bool
	cursorCol   string
	after       any
	hasAfter    bool
	max         any

	ahead *row
	done  bool
}

type row struct {
	keys []string
	vals []any
	size int64
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
	s := &source{c: c}
	if s.format, err = formatOf(req.Config, p); err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	if s.csv, err = csvOptionsOf(req.Config); err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	if s.batch, err = cfg.BatchSize(req.BatchSize, req.Config); err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	s.client = c.clientFor(execute.ReachOf(req.Reach))
	if s.retry, err = retry.Parse(req.Config, retry.Default()); err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	if s.inputs, err = c.inputs(ctx, execute.ReachOf(req.Reach), req.BaseDir, p); err != nil {
		return nil, err
	}
	if s.inputs, err = narrow(s.inputs, req.Shard); err != nil {
		return nil, err
	}
	if inc := req.Incremental; inc != nil {
		if inc.Cursor == "" {
			return nil, fmt.Errorf("file: incremental replication needs a cursor column")
		}
		s.incremental, s.cursorCol = true, inc.Cursor
		if inc.After != nil && inc.After.Value != nil {
			s.after, s.hasAfter = inc.After.Value, true
			s.max = inc.After.Value
		}
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
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	if s.done && s.ahead == nil {
		return nil, io.EOF
	}
	// A cancelled read also aborts an HTTP body blocked in Read.
	stop := context.AfterFunc(ctx, s.cancel)
	defer stop()

	b := pageBuilder{}
	if s.ahead != nil {
		b.add(s.ahead.keys, s.ahead.vals, s.ahead.size)
		s.ahead = nil
	}
	for len(b.rows) < s.batch && !s.done {
		if len(b.rows)%1024 == 1023 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("file: %w", err)
			}
		}
		r, err := s.pull()
		if errors.Is(err, io.EOF) {
			s.done = true
			break
		}
		if err != nil {
			return nil, s.fail(ctx, err)
		}
		b.add(r.keys, r.vals, r.size)
	}
	if s.incremental && !s.done {
		// Look one row ahead: only the last page may carry the bookmark.
		r, err := s.pull()
		switch {
		case errors.Is(err, io.EOF):
			s.done = true
		case err != nil:
			return nil, s.fail(ctx, err)
		default:
			s.ahead = &r
		}
	}
	if len(b.rows) == 0 {
		return nil, io.EOF
	}
	p := b.page()
	if s.incremental && s.done && s.ahead == nil && s.max != nil {
		p.Bookmark = &state.Bookmark{Cursor: s.cursorCol, Value: cursor.BookmarkValue(s.max)}
	}
	return p, nil
}

// fail prefers the caller's cancellation over the read error it caused.
func (s *source) fail(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("file: %w", ctx.Err())
	}
	return err
}

// pull returns the next row to emit across all inputs, applying the incremental filter.
func (s *source) pull() (row, error) {
	for {
		if s.cur == nil {
			if s.next >= len(s.inputs) {
				return row{}, io.EOF
			}
			in := s.inputs[s.next]
			s.next++
			r, err := s.open(in)
			if err != nil {
				return row{}, err
			}
			s.cur, s.curName, s.curCol = r, in.display, -1
		}
		keys, vals, size, err := s.cur.read()
		if errors.Is(err, io.EOF) {
			cerr := s.cur.close()
			s.cur = nil
			if cerr != nil {
				return row{}, fmt.Errorf("file: %s: %w", s.curName, cerr)
			}
			continue
		}
		if err != nil {
			return row{}, err
		}
		if s.incremental {
			v, err := s.cursorValue(keys, vals)
			if err != nil {
				return row{}, err
			}
			if s.hasAfter && (v == nil || cursor.Compare(v, s.after) <= 0) {
				continue
			}
			if v != nil && (s.max == nil || cursor.Compare(v, s.max) > 0) {
				s.max = v
			}
		}
		return row{keys: keys, vals: vals, size: size}, nil
	}
}

func (s *source) cursorValue(keys []string, vals []any) (any, error) {
	if s.format == CSV {
		if s.curCol < 0 {
			s.curCol = slices.Index(keys, s.cursorCol)
			if s.curCol < 0 {
				// The header is not quoted: a file that is not the CSV it was taken for
				// would publish its first line through the run's error.
				return nil, fmt.Errorf("file: %s: cursor column %q is not one of the %d columns of the header", s.curName, s.cursorCol, len(keys))
			}
		}
		return vals[s.curCol], nil
	}
	if i := slices.Index(keys, s.cursorCol); i >= 0 {
		return vals[i], nil
	}
	return nil, nil
}

func (s *source) open(in input) (rowReader, error) {
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
			return nil, fmt.Errorf("file: %w", err)
		}
		rc = f
	}
	br := bufio.NewReaderSize(rc, readBuffer)
	if s.format == CSV {
		r, err := newCSVReader(br, rc, in.display, s.csv)
		if err != nil {
			rc.Close()
			return nil, err
		}
		return r, nil
	}
	return newJSONLReader(br, rc, in.display), nil
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
	if s.cur != nil {
		err := s.cur.close()
		s.cur = nil
		return err
	}
	return nil
}
