package format

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"

	"github.com/sluicehq/sluice/adapters/connectors/internal/jsonenc"
	"github.com/sluicehq/sluice/adapters/connectors/internal/jsonlines"
)

// jsonlReader reads one JSON object per line.
type jsonlReader struct {
	br     *bufio.Reader
	closer io.Closer
	name   string
	line   int
	long   []byte // assembles lines longer than the read buffer
	p      objectParser
}

// NewJSONLReader reads JSONL from br, closing closer at Close; name is the object's name
// in errors.
func NewJSONLReader(br *bufio.Reader, closer io.Closer, name string) Reader {
	return &jsonlReader{br: br, closer: closer, name: name, p: newObjectParser()}
}

func (r *jsonlReader) Read() ([]string, []any, int64, error) {
	line, size, err := r.nextLine()
	if err != nil {
		return nil, nil, 0, err
	}
	keys, vals, err := r.p.parse(line)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("%s line %d: %w", r.name, r.line, err)
	}
	return keys, vals, size, nil
}

// AppendLine appends the next object as a JSON line (jsonlines.Append): as written when
// it fits a line, else parsed as Read parses it — failing with Read's error — and encoded
// again. size is the line's size in the file; io.EOF after the last.
func (r *jsonlReader) AppendLine(dst []byte) ([]byte, int64, error) {
	line, size, err := r.nextLine()
	if err != nil {
		return dst, 0, err
	}
	out, err := jsonlines.Append(dst, line, r.encode)
	if err != nil {
		return dst, 0, fmt.Errorf("%s line %d: %w", r.name, r.line, err)
	}
	return out, size, nil
}

// nextLine returns the next line that is not blank, without its line end, and its size in
// the file (line end included); read errors name the line, io.EOF comes bare after the
// last. The slice is valid until the next call.
func (r *jsonlReader) nextLine() ([]byte, int64, error) {
	for {
		line, err := r.readLine()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, 0, io.EOF
			}
			return nil, 0, fmt.Errorf("%s line %d: %w", r.name, r.line+1, err)
		}
		r.line++
		size := int64(len(line))
		line = bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(line)) > 0 {
			return line, size, nil
		}
	}
}

func (r *jsonlReader) encode(dst, b []byte) ([]byte, error) {
	keys, vals, err := r.p.parse(b)
	if err != nil {
		return dst, err
	}
	return jsonenc.NewRowEncoder(keys).AppendRow(dst, vals)
}

// readLine returns the next line including its newline (none on the last line), or
// io.EOF when no data is left. The slice is valid until the next call.
func (r *jsonlReader) readLine() ([]byte, error) {
	b, err := r.br.ReadSlice('\n')
	if !errors.Is(err, bufio.ErrBufferFull) {
		if errors.Is(err, io.EOF) && len(b) > 0 {
			err = nil
		}
		if err != nil {
			return nil, err
		}
		return b, nil
	}
	r.long = append(r.long[:0], b...)
	for errors.Is(err, bufio.ErrBufferFull) {
		b, err = r.br.ReadSlice('\n')
		r.long = append(r.long, b...)
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	if err != nil {
		return nil, err
	}
	return r.long, nil
}

func (r *jsonlReader) Close() error { return r.closer.Close() }
