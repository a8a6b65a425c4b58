package cluster_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/cluster"
)

// lockedBuffer is a log sink the member's goroutines write to.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// line is the first JSON line with message msg, or nil.
func (b *lockedBuffer) line(t *testing.T, msg string) map[string]any {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, l := range strings.Split(b.buf.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == msg {
			return m
		}
	}
	return nil
}

// A completed run's "run finished" line has no code at all rather than code="".
func TestRunFinishedLineHasNoEmptyCode(t *testing.T) {
	t.Parallel()
	logs := &lockedBuffer{}
	store := newHistory(t)
	store.add(claimed("r1"))
	start(t, store, &fakeRunner{fn: succeed(3)}, func(_ *cluster.Config, d *cluster.Deps) {
		d.Log = slog.New(slog.NewJSONHandler(logs, nil))
	})
	var line map[string]any
	require.Eventually(t, func() bool { line = logs.line(t, "run finished"); return line != nil }, waitFor, tick)
	require.Equal(t, "completed", line["status"])
	require.NotContains(t, line, "code", "success carries no error code")
	require.EqualValues(t, 3, line["rows_written"])
}
