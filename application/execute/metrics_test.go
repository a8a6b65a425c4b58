package execute_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/execute"
)

// pageCounts records what the executor counts: "pipeline connector direction" → pages and rows.
type pageCounts struct {
	mu         sync.Mutex
	announced  []string
	pages      map[string]int
	rows       map[string]int
	firstEvent string
}

func (c *pageCounts) PipelineConnectors(pipeline, source, sink string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.announced = append(c.announced, pipeline+" "+source+" "+sink)
	if c.firstEvent == "" {
		c.firstEvent = "announce"
	}
}

func (c *pageCounts) PipelinePage(pipeline, connector, direction string, rows int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.pages == nil {
		c.pages, c.rows = map[string]int{}, map[string]int{}
	}
	k := fmt.Sprintf("%s %s %s", pipeline, connector, direction)
	c.pages[k]++
	c.rows[k] += rows
	if c.firstEvent == "" {
		c.firstEvent = "page"
	}
}

func TestPagesAreCountedPerPipelineConnectorAndDirection(t *testing.T) {
	t.Parallel()
	counts := &pageCounts{}
	cfg := config(false)
	exec := setup(&fakeSource{pages: 4, rowsPerPage: 3}, &fakeSink{failAt: 4})
	exec.Metrics = counts
	_, err := exec.Run(context.Background(), execute.Job{Config: cfg, Pipeline: "nightly-orders"})
	require.Error(t, err, "the sink fails the fourth page")

	require.Equal(t, "announce", counts.firstEvent, "the series exist before the first page")
	require.Equal(t, []string{"nightly-orders fake fake"}, counts.announced)
	require.Equal(t, map[string]int{
		"nightly-orders fake read":  4, // every page the source handed over
		"nightly-orders fake write": 3, // only pages the sink confirmed
	}, counts.pages)
	require.Equal(t, map[string]int{"nightly-orders fake read": 12, "nightly-orders fake write": 9}, counts.rows)
}

func TestPagesAreCountedUnderTheConfigNameWithoutARunName(t *testing.T) {
	t.Parallel()
	counts := &pageCounts{}
	exec := setup(&fakeSource{pages: 2, rowsPerPage: 1}, &fakeSink{})
	exec.Metrics = counts
	_, err := exec.Run(context.Background(), execute.Job{Config: config(false)})
	require.NoError(t, err)
	require.Equal(t, map[string]int{"t fake read": 2, "t fake write": 2}, counts.pages)
}
