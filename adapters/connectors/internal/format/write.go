package format

import (
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"time"

	"github.com/sluicehq/sluice/adapters/connectors/internal/jsonenc"
	"github.com/sluicehq/sluice/application/execute"
)

// Writer encodes pages into one object.
type Writer interface {
	// Write encodes p; an error names the column and row of the page that failed.
	Write(p *execute.Page) error
	// Close writes what the format holds back (CSV's buffer, Parquet's last row group
	// and footer). It does not close the io.Writer the Writer was made with.
	Close() error
}

// NewWriter returns a writer of o.Format into w. existingHeader is the header of a CSV
// file being appended to (pages are mapped onto it and no header is written); nil
// otherwise.
func NewWriter(w io.Writer, o Options, existingHeader []string) (Writer, error) {
	switch o.Format {
	case CSV:
		return newCSVWriter(w, o.CSV, existingHeader), nil
	case JSONL:
		return &jsonlWriter{w: w}, nil
	case Parquet:
		return newParquetWriter(w, o)
	}
	return nil, fmt.Errorf("unknown format %q", o.Format)
}

type jsonlWriter struct {
	w   io.Writer
	buf []byte
}

func (j *jsonlWriter) Write(p *execute.Page) error {
	enc := jsonenc.NewRowEncoder(p.Columns)
	buf := j.buf[:0]
	for i, row := range p.Rows {
		var err error
		if buf, err = enc.AppendRow(buf, row); err != nil {
			return fmt.Errorf("row %d of the page: %w", i+1, err)
		}
		if len(buf) >= 64<<10 {
			if _, err := j.w.Write(buf); err != nil {
				return err
			}
			buf = buf[:0]
		}
	}
	j.buf = buf[:0]
	_, err := j.w.Write(buf)
	return err
}

func (j *jsonlWriter) Close() error { return nil }

type csvWriter struct {
	w           *csv.Writer
	writeHeader bool
	header      []string // fixed by the existing file or the first page
	rec         []string
	scratch     []byte
}

func newCSVWriter(out io.Writer, o CSVOptions, existing []string) *csvWriter {
	w := csv.NewWriter(out)
	w.Comma = o.Comma
	return &csvWriter{w: w, writeHeader: o.Header && existing == nil, header: existing}
}

func (c *csvWriter) Write(p *execute.Page) error {
	if c.header == nil {
		c.header = slices.Clone(p.Columns)
		if c.writeHeader {
			if err := c.w.Write(c.header); err != nil {
				return err
			}
		}
	}
	// pos maps page columns onto header positions; nil means they are the same.
	var pos []int
	if !slices.Equal(p.Columns, c.header) {
		pos = make([]int, len(p.Columns))
		for i, col := range p.Columns {
			if pos[i] = slices.Index(c.header, col); pos[i] < 0 {
				return fmt.Errorf("column %q is not in the CSV header %v; every page must use the columns of the first", col, c.header)
			}
		}
	}
	if cap(c.rec) < len(c.header) {
		c.rec = make([]string, len(c.header))
	}
	rec := c.rec[:len(c.header)]
	for _, row := range p.Rows {
		if pos != nil {
			clear(rec)
		}
		for i, v := range row {
			s, err := text(v, &c.scratch)
			if err != nil {
				return fmt.Errorf("column %q: %w", p.Columns[i], err)
			}
			if pos == nil {
				rec[i] = s
			} else {
				rec[pos[i]] = s
			}
		}
		if err := c.w.Write(rec); err != nil {
			return err
		}
	}
	return c.w.Error()
}

// text renders a value for a CSV field (and a Parquet string column): nil is empty,
// times RFC 3339, bytes base64, maps and lists JSON. scratch is reused between calls.
func text(v any, scratch *[]byte) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case float64:
		return string(jsonenc.AppendPlainFloat((*scratch)[:0], x, 64)), nil
	case float32:
		return string(jsonenc.AppendPlainFloat((*scratch)[:0], float64(x), 32)), nil
	case bool:
		return strconv.FormatBool(x), nil
	case time.Time:
		return x.Format(time.RFC3339Nano), nil
	case []byte:
		return base64.StdEncoding.EncodeToString(x), nil
	case json.Number:
		return string(x), nil
	}
	b, err := jsonenc.AppendValue((*scratch)[:0], v)
	if err != nil {
		return "", err
	}
	*scratch = b
	return string(b), nil
}

func (c *csvWriter) Close() error {
	c.w.Flush()
	return c.w.Error()
}
