package format

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// csvReader reads CSV rows; every value is a string.
type csvReader struct {
	r      *csv.Reader
	closer io.Closer
	name   string
	header []string
	offset int64
	slab   []any // values are carved from slabs to save one allocation per row
}

// NewCSVReader reads CSV from br, closing closer at Close; name is the object's name in
// errors.
func NewCSVReader(br *bufio.Reader, closer io.Closer, name string, o CSVOptions) (Reader, error) {
	return newCSVReader(br, closer, name, o)
}

func newCSVReader(br *bufio.Reader, closer io.Closer, name string, o CSVOptions) (*csvReader, error) {
	r := csv.NewReader(br)
	r.Comma = o.Comma
	r.ReuseRecord = false // rows are handed to the caller; each needs its own strings
	r.FieldsPerRecord = 0 // the first record fixes the count; a ragged row is ErrFieldCount
	c := &csvReader{r: r, closer: closer, name: name}
	if !o.Header {
		return c, nil
	}
	rec, err := r.Read()
	if errors.Is(err, io.EOF) {
		return c, nil
	}
	if err != nil {
		return nil, c.wrap(err, rec)
	}
	if len(rec) > 0 {
		rec[0] = strings.TrimPrefix(rec[0], "\ufeff") // spreadsheet exports start with a BOM
	}
	seen := make(map[string]bool, len(rec))
	for i, h := range rec {
		if seen[h] {
			// Named by position, not quoted: a header line of a file that is not a CSV
			// is row data.
			return nil, fmt.Errorf("%s line 1: column %d of the header repeats an earlier column's name", name, i+1)
		}
		seen[h] = true
	}
	c.header = rec
	c.offset = r.InputOffset()
	return c, nil
}

func (c *csvReader) Read() ([]string, []any, int64, error) {
	rec, err := c.r.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			return nil, nil, 0, io.EOF
		}
		return nil, nil, 0, c.wrap(err, rec)
	}
	if c.header == nil {
		c.header = make([]string, len(rec))
		for i := range rec {
			c.header[i] = "col" + strconv.Itoa(i+1)
		}
	}
	n := len(rec)
	if len(c.slab) < n {
		c.slab = make([]any, max(n, 4096))
	}
	vals := c.slab[:n:n]
	c.slab = c.slab[n:]
	for i, f := range rec {
		vals[i] = f
	}
	off := c.r.InputOffset()
	size := off - c.offset
	c.offset = off
	return c.header, vals, size, nil
}

func (c *csvReader) wrap(err error, rec []string) error {
	var pe *csv.ParseError
	if !errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", c.name, err)
	}
	if errors.Is(pe.Err, csv.ErrFieldCount) {
		want := len(c.header)
		what := "the header has"
		if want == 0 {
			want = c.r.FieldsPerRecord
			what = "the first row has"
		}
		return fmt.Errorf("%s line %d: row has %d fields, %s %d", c.name, pe.Line, len(rec), what, want)
	}
	return fmt.Errorf("%s line %d: %w", c.name, pe.Line, pe.Err)
}

func (c *csvReader) Close() error { return c.closer.Close() }
func (*csvReader) fixedColumns()  {}

// HeaderOf is the header a CSV reader read (nil for other readers or a file without one).
func HeaderOf(r Reader) []string {
	if c, ok := r.(*csvReader); ok {
		return c.header
	}
	return nil
}
