package execute

// Metrics counts what pipelines move (SPEC §14.6 sluice_pipeline_rows_total and
// sluice_pipeline_pages_total). Calls come from the writing goroutine of each run, so an
// implementation must be safe for concurrent use across runs; nil on Executor counts
// nothing.
type Metrics interface {
	// PipelineConnectors is called once per run before its first page, naming its
	// source and sink connector types, so their series can exist at zero.
	PipelineConnectors(pipeline, source, sink string)
	// PipelinePage counts one page of rows: direction "read" for a page the source
	// handed over, "write" for a page the sink confirmed.
	PipelinePage(pipeline, connector, direction string, rows int)
}

// Directions of PipelinePage.
const (
	DirectionRead  = "read"
	DirectionWrite = "write"
)

// pipelineLabel is the name a job's pages are counted under: the run's name when the
// caller gave one, else the config's.
func (j Job) pipelineLabel() string {
	if j.Pipeline != "" {
		return j.Pipeline
	}
	if j.Config != nil {
		return j.Config.Name
	}
	return ""
}

// countConnectors announces the job's connectors to the metrics.
func (r *runner) countConnectors() {
	if r.metrics != nil {
		r.metrics.PipelineConnectors(r.job.pipelineLabel(), r.cfg.Source.Type, r.cfg.Sink.Type)
	}
}

// countPage counts one page of rows in direction.
func (r *runner) countPage(direction string, rows int64) {
	if r.metrics == nil {
		return
	}
	conn := r.cfg.Sink.Type
	if direction == DirectionRead {
		conn = r.cfg.Source.Type
	}
	r.metrics.PipelinePage(r.job.pipelineLabel(), conn, direction, int(rows))
}
