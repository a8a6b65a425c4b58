package metrics

import "sync"

// OtherPipeline is the pipeline label of every pipeline past --metrics-max-pipelines.
const OtherPipeline = "_other"

// DefaultMaxPipelines is how many distinct pipeline labels one server exports (SPEC §14.6).
const DefaultMaxPipelines = 1000

// pipelines bounds the pipeline label: names are chosen by whoever submits a config, so
// without a cap every new name would mint series until the scrape is too big to take.
// The first max names keep their own label for the life of the process; later ones share
// OtherPipeline. A name is "known" once it gets its label: its series are then created
// at zero, so rate() and absent() work before its first event.
type pipelines struct {
	max int

	mu    sync.Mutex
	known map[string]struct{}
	// init creates the zero series of a label the first time it is handed out; it runs
	// under mu, so two first events of one name cannot both see it unknown.
	init func(label string)
}

func newPipelines(limit int, init func(string)) *pipelines {
	if limit < 0 {
		limit = 0
	}
	return &pipelines{max: limit, known: map[string]struct{}{}, init: init}
}

// label is the label value name is exported under.
func (p *pipelines) label(name string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if _, ok := p.known[name]; ok {
		return name
	}
	// OtherPipeline itself never takes a slot: it is the overflow, not a pipeline.
	if name != OtherPipeline && len(p.known) < p.max+p.otherSlot() {
		p.known[name] = struct{}{}
		p.init(name)
		return name
	}
	if _, ok := p.known[OtherPipeline]; !ok {
		p.known[OtherPipeline] = struct{}{}
		p.init(OtherPipeline)
	}
	return OtherPipeline
}

// otherSlot is 1 once the overflow label is in the known set, so it does not count
// against max. Callers hold mu.
func (p *pipelines) otherSlot() int {
	if _, ok := p.known[OtherPipeline]; ok {
		return 1
	}
	return 0
}
