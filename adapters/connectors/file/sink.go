package file

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/format"
	"github.com/sluicehq/sluice/adapters/connectors/internal/jsonlines"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

const writeBuffer = 1 << 20

type sink struct {
	target   string
	tmp      *os.File
	bw       *bufio.Writer
	w        format.Writer
	jsonl    bool // the target is JSONL: JSON-line pages are written as they come
	lines    bool // AcceptEncoding took JSON-line pages
	perm     fs.FileMode
	err      error // the first write error; the sink refuses to commit after it
	finished bool
}

// OpenSink creates the temp file next to the target; for append it copies the existing
// file into it first.
func (c *Connector) OpenSink(ctx context.Context, req execute.WriteRequest) (execute.Sink, error) {
	p, err := cfg.String(req.Config, "path", "")
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	if p == "" {
		return nil, fmt.Errorf("file: config key \"path\" is required")
	}
	if err := sinkPathError(p); err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	opts, err := format.Parse(req.Config, p)
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	mode, err := sinkModeOf(req.Config)
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	target, err := execute.ReachOf(req.Reach).Path(ctx, "path", req.BaseDir, p)
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	s := &sink{target: target, perm: 0o644, jsonl: opts.Format == format.JSONL}
	st, statErr := os.Stat(target)
	exists := statErr == nil
	switch {
	case exists && !st.Mode().IsRegular():
		return nil, fmt.Errorf("file: %s is not a regular file", target)
	case exists:
		s.perm = st.Mode().Perm()
	case !errors.Is(statErr, fs.ErrNotExist):
		return nil, fmt.Errorf("file: %w", statErr)
	}
	if exists && mode == pipeline.Append && opts.Format == format.Parquet && st.Size() > 0 {
		return nil, fmt.Errorf("file: %s: a Parquet file cannot be appended to (its footer ends it); set write_mode: overwrite or write to a new path", target)
	}
	dir, name := filepath.Split(target)
	if s.tmp, err = os.CreateTemp(dir, "."+name+".sluice-tmp-*"); err != nil {
		return nil, fmt.Errorf("file: create temp file for %s: %w", target, err)
	}
	var existingHeader []string
	if exists && mode == pipeline.Append {
		if existingHeader, err = s.copyExisting(opts); err != nil {
			s.discard()
			return nil, err
		}
	}
	s.bw = bufio.NewWriterSize(s.tmp, writeBuffer)
	if s.w, err = format.NewWriter(s.bw, opts, existingHeader); err != nil {
		s.discard()
		return nil, fmt.Errorf("file: %w", err)
	}
	return s, nil
}

// copyExisting copies the target into the temp file, ending it with a newline, and
// returns the existing CSV header (nil when the file is empty or has none).
func (s *sink) copyExisting(opts format.Options) ([]string, error) {
	src, err := os.Open(s.target)
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	defer src.Close()
	n, err := io.Copy(s.tmp, src)
	if err != nil {
		return nil, fmt.Errorf("file: copy %s for append: %w", s.target, err)
	}
	if n == 0 {
		return nil, nil
	}
	last := make([]byte, 1)
	if _, err := src.ReadAt(last, n-1); err != nil {
		return nil, fmt.Errorf("file: read %s: %w", s.target, err)
	}
	if last[0] != '\n' {
		if _, err := s.tmp.Write([]byte{'\n'}); err != nil {
			return nil, fmt.Errorf("file: write temp file for %s: %w", s.target, err)
		}
	}
	if opts.Format != format.CSV || !opts.CSV.Header {
		return nil, nil
	}
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return nil, fmt.Errorf("file: read %s: %w", s.target, err)
	}
	r, err := format.NewCSVReader(bufio.NewReader(src), src, s.target, opts.CSV)
	if err != nil {
		return nil, fmt.Errorf("file: %w", err)
	}
	return format.HeaderOf(r), nil
}

func (s *sink) Write(ctx context.Context, p *execute.Page) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("file: %w", err)
	}
	if s.finished {
		return fmt.Errorf("file: write to %s after the sink was finished", s.target)
	}
	if s.err != nil {
		return s.err
	}
	var err error
	switch {
	case p.Encoded == nil:
		err = s.w.Write(p)
	case p.Encoded.Format == jsonlines.Format && s.lines:
		_, err = s.bw.Write(p.Encoded.Data)
	default:
		err = fmt.Errorf("page encoded as %q, which this sink did not accept", p.Encoded.Format)
	}
	if err != nil {
		s.err = fmt.Errorf("file: %s: %w", s.target, err)
		return s.err
	}
	return nil
}

// Commit flushes and syncs the temp file and renames it over the target.
func (s *sink) Commit(context.Context) error {
	if s.finished {
		return fmt.Errorf("file: %s was already committed or aborted", s.target)
	}
	if s.err != nil {
		s.discard()
		return fmt.Errorf("file: not committing after a failed write: %w", s.err)
	}
	s.finished = true
	err := s.w.Close()
	if err == nil {
		err = s.bw.Flush()
	}
	if err == nil {
		err = s.tmp.Chmod(s.perm)
	}
	if err == nil {
		err = s.tmp.Sync()
	}
	if cerr := s.tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(s.tmp.Name(), s.target)
	}
	if err != nil {
		os.Remove(s.tmp.Name())
		return fmt.Errorf("file: write %s: %w", s.target, err)
	}
	syncDir(filepath.Dir(s.target))
	return nil
}

// Abort removes the temp file; the target keeps its previous content.
func (s *sink) Abort(context.Context) error {
	if s.finished {
		return nil
	}
	return s.discard()
}

func (s *sink) discard() error {
	s.finished = true
	s.tmp.Close()
	if err := os.Remove(s.tmp.Name()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("file: remove temp file: %w", err)
	}
	return nil
}

func (*sink) Durability() execute.Durability { return execute.AtEnd }

// AcceptEncoding takes JSON-line pages (objects checked by the source and passed as they
// are) into a JSONL file: the lines are the objects the decoded rows would be written as,
// byte for byte as the source held them.
func (s *sink) AcceptEncoding(_ context.Context, e execute.Encoding) bool {
	s.lines = s.jsonl && e.Format == jsonlines.Format
	return s.lines
}

// syncDir makes the rename durable. Best effort: some filesystems refuse to sync a
// directory, and the rename itself already happened.
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		d.Sync()
		d.Close()
	}
}
