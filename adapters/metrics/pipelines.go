package metrics

import "sync"

// OtherPipeline is the pipeline label of every pipeline past --metrics-max-pipelines.
const OtherPipeline = "_other"

// UnknownPipeline labels a run whose name the caller did not have (a sharded run ended
// by a reclaim): an empty label value would read as no label at all.
const UnknownPipeline = "_unknown"

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
	if name == "" {
		return p.reserved(UnknownPipeline)
	}
	if _, ok := p.known[name]; ok {
		return name
	}
	// The reserved labels never take a slot: they are not pipelines.
	if name != OtherPipeline && name != UnknownPipeline && len(p.known) < p.max+p.reservedSlots() {
		p.known[name] = struct{}{}
		p.init(name)
		return name
	}
	return p.reserved(OtherPipeline)
}

// reserved hands out a reserved label, creating its series the first time. Callers hold mu.
func (p *pipelines) reserved(label string) string {
	if _, ok := p.known[label]; !ok {
		p.known[label] = struct{}{}
		p.init(label)
	}
	return label
}

// reservedSlots counts the reserved labels in the known set, which do not count against
// max. Callers hold mu.
func (p *pipelines) reservedSlots() int {
	n := 0
	for _, l := range []string{OtherPipeline, UnknownPipeline} {
		if _, ok := p.known[l]; ok {
			n++
		}
	}
	return n
}
