package file_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/file"
	"github.com/sluicehq/sluice/adapters/connectors/internal/conntest"
	"github.com/sluicehq/sluice/tests/contract/connector"
)

// contractRow is the contract suite's Data as parquet-go's own struct mapping writes it,
// so the source is checked against files the library wrote, not files sluice wrote.
type contractRow struct {
	ID     int64     `parquet:"id"`
	Name   string    `parquet:"name"`
	Amount float64   `parquet:"amount"`
	Active bool      `parquet:"active"`
	At     time.Time `parquet:"at,timestamp(nanosecond)"`
	Note   *string   `parquet:"note,optional"`
}

func writeParquet(t *testing.T, path string, d connector.Dataset) {
	t.Helper()
	f, err := os.Create(path)
	require.NoError(t, err)
	w := parquet.NewGenericWriter[contractRow](f)
	for _, r := range d.Rows {
		row := contractRow{ID: r[0].(int64), Name: r[1].(string), Amount: r[2].(float64), Active: r[3].(bool), At: r[4].(time.Time)}
		if s, ok := r[5].(string); ok {
			row.Note = &s
		}
		_, err := w.Write([]contractRow{row})
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	require.NoError(t, f.Close())
}

// readParquet reads a Parquet file back through the shared reader, rows in the order of
// cols.
func readParquet(t *testing.T, path string, cols []string) ([][]any, bool) {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false
	}
	require.NoError(t, err)
	defer f.Close()
	st, err := f.Stat()
	require.NoError(t, err)
	return conntest.ReadParquet(t, f, st.Size(), path, cols), true
}

func TestContractParquet(t *testing.T) {
	t.Parallel()
	c := file.New()
	connector.Run(t, connector.Harness{
		Name: "file parquet",
		Spec: c.Spec(),
		NewSource: func(t *testing.T, data connector.Dataset) connector.SourceCase {
			dir := t.TempDir()
			writeParquet(t, filepath.Join(dir, "in.parquet"), data)
			return connector.SourceCase{Source: c, Config: map[string]any{"path": "in.parquet"}, BaseDir: dir, Want: data}
		},
		BrokenSource: func(t *testing.T) connector.BrokenCase {
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "bad.parquet"), []byte("PAR1 this is not parquet at all PAR1"), 0o644))
			return connector.BrokenCase{Source: c, Config: map[string]any{"path": "bad.parquet"}, BaseDir: dir,
				Want: "bad.parquet: not a readable Parquet file"}
		},
		NewSink: func(t *testing.T) connector.SinkCase {
			dir := t.TempDir()
			out := filepath.Join(dir, "out.parquet")
			return connector.SinkCase{
				Sink: c, Config: map[string]any{"path": "out.parquet", "row_group_rows": 7}, BaseDir: dir,
				ReadBack:  func(t *testing.T, cols []string) ([][]any, bool) { return readParquet(t, out, cols) },
				Leftovers: leftovers(dir),
			}
		},
		Caps: connector.Capabilities{Incremental: true, Reaches: connector.Reaches{Paths: true}},
	})
}
