package format

import (
	"fmt"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// Formats.
const (
	CSV     = "csv"
	JSONL   = "jsonl"
	Parquet = "parquet"
)

// Parquet compressions.
const (
	Zstd   = "zstd"
	Snappy = "snappy"
	None   = "none"
)

// RowGroupRowsDefault is how many rows a Parquet row group holds unless row_group_rows
// says otherwise: large enough for good compression, small enough that a reader holding
// one row group stays within tens of megabytes for ordinary rows.
const RowGroupRowsDefault = 100_000

// Options are a connector's format keys, parsed.
type Options struct {
	Format string
	CSV    CSVOptions
	// Compression and RowGroupRows apply to Parquet output.
	Compression  string
	RowGroupRows int
}

// CSVOptions are the CSV keys.
type CSVOptions struct {
	Comma  rune
	Header bool
}

// Fields are the format keys' specs, shared by every connector that reads or writes
// objects; formatDesc describes the `format` key for the connector.
func Fields(formatDesc string) []pipeline.FieldSpec {
	return []pipeline.FieldSpec{
		{Name: "format", Type: pipeline.FieldString, Enum: []string{CSV, JSONL, Parquet}, Description: formatDesc},
		{Name: "delimiter", Type: pipeline.FieldString, Default: ",",
			Description: "CSV field delimiter, one character."},
		{Name: "header", Type: pipeline.FieldBool, Default: true,
			Description: "CSV: the first row holds the column names (source) / write a header row (sink). Without a header, source columns are named col1, col2, …"},
		{Name: "compression", Type: pipeline.FieldString, Role: pipeline.RoleSink, Enum: []string{Zstd, Snappy, None}, Default: Zstd,
			Description: "Parquet sink: the page compression codec."},
		{Name: "row_group_rows", Type: pipeline.FieldInt, Role: pipeline.RoleSink, Default: int64(RowGroupRowsDefault),
			Description: "Parquet sink: rows per row group. A reader holds one row group in memory, so very wide rows want fewer."},
	}
}

// Parse reads the format keys of c; name is the object name (path or key) whose
// extension implies the format when `format` is not set.
func Parse(c map[string]any, name string) (Options, error) {
	var o Options
	var err error
	if o.Format, err = Of(c, name); err != nil {
		return o, err
	}
	if o.CSV, err = csvOptionsOf(c); err != nil {
		return o, err
	}
	if o.Compression, err = compressionOf(c); err != nil {
		return o, err
	}
	o.RowGroupRows, err = rowGroupRowsOf(c)
	return o, err
}

// Check reports the format keys' errors by key, for a connector's Spec check; name ""
// skips the format itself (a name still holding a directive).
func Check(c map[string]any, name string) map[string]error {
	errs := map[string]error{}
	if name != "" {
		if _, err := Of(c, name); err != nil {
			errs["format"] = err
		}
	}
	if _, err := csvOptionsOf(c); err != nil {
		errs["delimiter"] = err
	}
	if _, err := compressionOf(c); err != nil {
		errs["compression"] = err
	}
	if _, err := rowGroupRowsOf(c); err != nil {
		errs["row_group_rows"] = err
	}
	return errs
}

func compressionOf(c map[string]any) (string, error) {
	comp, err := cfg.String(c, "compression", Zstd)
	if err != nil {
		return "", err
	}
	switch strings.ToLower(comp) {
	case Zstd, Snappy, None:
		return strings.ToLower(comp), nil
	}
	return "", fmt.Errorf("config key \"compression\" must be zstd, snappy or none, got %q", comp)
}

func rowGroupRowsOf(c map[string]any) (int, error) {
	n, err := cfg.Int(c, "row_group_rows", RowGroupRowsDefault)
	if err != nil {
		return 0, err
	}
	if n < 1 || n > 100_000_000 {
		return 0, fmt.Errorf("config key \"row_group_rows\" must be between 1 and 100000000, got %d", n)
	}
	return int(n), nil
}

func knownFormat(f string) bool {
	switch strings.ToLower(f) {
	case CSV, JSONL, Parquet:
		return true
	}
	return false
}

// Of returns the configured format, else the one name's extension implies.
func Of(c map[string]any, name string) (string, error) {
	f, err := cfg.String(c, "format", "")
	if err != nil {
		return "", err
	}
	if f != "" {
		if !knownFormat(f) {
			return "", fmt.Errorf("unknown format %q; use csv, jsonl or parquet", f)
		}
		return strings.ToLower(f), nil
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".csv":
		return CSV, nil
	case ".jsonl", ".ndjson":
		return JSONL, nil
	case ".parquet", ".pq":
		return Parquet, nil
	}
	return "", fmt.Errorf("cannot tell the format of %q from its extension; set format: csv, jsonl or parquet", name)
}

// Extension is the file name extension of format f.
func Extension(f string) string {
	switch f {
	case JSONL:
		return ".jsonl"
	case Parquet:
		return ".parquet"
	}
	return ".csv"
}

func csvOptionsOf(c map[string]any) (CSVOptions, error) {
	o := CSVOptions{Comma: ',', Header: true}
	d, err := cfg.String(c, "delimiter", ",")
	if err != nil {
		return o, err
	}
	r, size := utf8.DecodeRuneInString(d)
	if d == "" || size != len(d) || r == utf8.RuneError || r == '"' || r == '\r' || r == '\n' {
		return o, fmt.Errorf("delimiter must be one character other than a quote or line break, got %q", d)
	}
	o.Comma = r
	if o.Header, err = cfg.Bool(c, "header", true); err != nil {
		return o, err
	}
	return o, nil
}
