package execute

import (
	"runtime/debug"
	"time"
)

// Stats counts what a run moved. RowsRead counts rows the source handed over, RowsWritten
// and Pages only pages the sink confirmed, so after a failure RowsWritten is what is safe.
type Stats struct {
	RowsRead    int64
	RowsWritten int64
	Pages       int64
	Bytes       int64
	Elapsed     time.Duration
}

// RowsPerSecond is the write throughput; 0 before any time has passed.
func (s Stats) RowsPerSecond() float64 {
	if s.Elapsed <= 0 {
		return 0
	}
	return float64(s.RowsWritten) / s.Elapsed.Seconds()
}

func stack() []byte { return debug.Stack() }
