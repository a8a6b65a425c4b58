package format

import (
	"github.com/sluicehq/sluice/application/execute"
)

// pageBuilder collects rows whose keys may differ: the page's columns are the union of
// the keys in first-seen order. Rows with the page's exact columns (every CSV row, most
// JSONL rows) are kept as they are.
type pageBuilder struct {
	cols  []string
	index map[string]int
	rows  [][]any
	bytes int64
}

func (b *pageBuilder) add(keys []string, vals []any, size int64) {
	b.bytes += size
	if b.cols == nil {
		b.cols = append(make([]string, 0, len(keys)), keys...)
		b.rows = append(b.rows, vals)
		return
	}
	if sameKeys(keys, b.cols) {
		b.rows = append(b.rows, vals)
		return
	}
	if b.index == nil {
		b.index = make(map[string]int, len(b.cols))
		for i, c := range b.cols {
			b.index[c] = i
		}
	}
	row := make([]any, len(b.cols))
	for k, key := range keys {
		i, ok := b.index[key]
		if !ok {
			i = len(b.cols)
			b.cols = append(b.cols, key)
			b.index[key] = i
			row = append(row, nil)
		}
		row[i] = vals[k]
	}
	b.rows = append(b.rows, row)
}

func sameKeys(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	if len(a) > 0 && &a[0] == &b[0] {
		return true
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// page pads rows read before a column appeared and returns the page.
func (b *pageBuilder) page() *execute.Page {
	n := len(b.cols)
	for i, r := range b.rows {
		if len(r) < n {
			b.rows[i] = append(r[:len(r):len(r)], make([]any, n-len(r))...)
		}
	}
	return &execute.Page{Columns: b.cols, Rows: b.rows, Bytes: b.bytes}
}
