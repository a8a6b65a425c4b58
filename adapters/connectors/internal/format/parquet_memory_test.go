package format_test

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/format"
)

// liveHeap is the bytes of live objects once garbage is collected: what the code holds,
// without the garbage-collection timing that moves a process's peak RSS. Two collections:
// the first only moves sync.Pool contents to their victim caches.
func liveHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

// memGroupRows is the row group of the memory tests; a page is half of it.
const memGroupRows = 2000

func memPage(first int) [][]any {
	at := time.Unix(1_700_000_000, 0).UTC()
	rows := make([][]any, memGroupRows/2)
	for i := range rows {
		n := first + i
		rows[i] = []any{int64(n), "a name that takes some room in the page", float64(n) * 1.5, at.Add(time.Duration(n) * time.Second), n%2 == 0}
	}
	return rows
}

// footerPerGroup bounds what a written row group leaves in the writer for the footer.
const footerPerGroup = 10 << 10

var memColumns = []string{"id", "name", "amount", "created_at", "active"}

// The writer's memory follows the row group, not the rows written: after 10 times the
// row groups, what it holds has grown by no more than the footer's metadata of the groups
// written (kept for the footer: about 5 KiB a group of these five columns, half a MiB
// for 10M rows at the default 100,000-row groups). The reader holds one group and a page.
func TestParquetMemoryFollowsTheRowGroup(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "big.parquet"))
	require.NoError(t, err)
	defer f.Close()
	w, err := format.NewWriter(f, format.Options{Format: format.Parquet, RowGroupRows: memGroupRows}, nil)
	require.NoError(t, err)
	write := func(groups, from int) {
		for p := 0; p < groups*2; p++ {
			require.NoError(t, w.Write(page(memColumns, memPage(from+p*memGroupRows/2)...)))
		}
	}
	write(10, 0)
	early := liveHeap()
	write(90, 10*memGroupRows)
	late := liveHeap()
	require.NoError(t, w.Close())
	t.Logf("writer: live heap after 10 row groups %d KiB, after 100 %d KiB", early>>10, late>>10)
	require.Less(t, late, early+90*footerPerGroup, "the writer holds one row group and the footer, whatever the number written")

	// The reader holds one row group plus a page: the same after the 10th group and the 95th.
	st, err := f.Stat()
	require.NoError(t, err)
	r, err := format.NewParquetReader(f, st.Size(), nil, "big.parquet")
	require.NoError(t, err)
	read := func(rows int) {
		for range rows {
			_, _, _, err := r.Read()
			require.NoError(t, err)
		}
	}
	read(10 * memGroupRows)
	early = liveHeap()
	read(85 * memGroupRows)
	late = liveHeap()
	t.Logf("reader: live heap after 10 row groups %d KiB, after 95 %d KiB", early>>10, late>>10)
	require.Less(t, late, early+256<<10, "the reader holds one row group, whatever the number read")
	read(5 * memGroupRows)
	_, _, _, err = r.Read()
	require.True(t, errors.Is(err, io.EOF), "100 row groups, no more: %v", err)
}
