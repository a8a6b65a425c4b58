package harness

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/uptrace/bun/driver/sqliteshim"
)

// CountLines counts the lines of a file the way `wc -l` would, plus a last line that
// lacks its newline.
func CountLines(path string) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("count lines: %w", err)
	}
	defer f.Close()
	n, err := countLines(f)
	if err != nil {
		return 0, fmt.Errorf("count lines of %s: %w", path, err)
	}
	return n, nil
}

func countLines(r io.Reader) (int64, error) {
	buf := make([]byte, 1<<20)
	var n int64
	last := byte('\n')
	for {
		k, err := r.Read(buf)
		if k > 0 {
			n += int64(bytes.Count(buf[:k], []byte{'\n'}))
			last = buf[k-1]
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if last != '\n' {
		n++
	}
	return n, nil
}

// CountSQLiteRows returns SELECT count(*) of table in the SQLite file at path, opened
// read-only through the same driver sluice uses.
func CountSQLiteRows(ctx context.Context, path, table string) (int64, error) {
	if _, err := os.Stat(path); err != nil {
		return 0, fmt.Errorf("count rows: %w", err)
	}
	db, err := sql.Open(sqliteshim.ShimName, "file:"+path+"?mode=ro")
	if err != nil {
		return 0, fmt.Errorf("count rows: open %s: %w", path, err)
	}
	defer db.Close()
	var n int64
	q := `SELECT count(*) FROM "` + strings.ReplaceAll(table, `"`, `""`) + `"`
	if err := db.QueryRowContext(ctx, q).Scan(&n); err != nil {
		return 0, fmt.Errorf("count rows of %s in %s: %w", table, path, err)
	}
	return n, nil
}
