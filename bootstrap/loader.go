package bootstrap

import (
	"github.com/sluicehq/sluice/adapters/configtext"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// newLoader is the config loader of every command: this process's environment and
// files, the text decoder, the given connector catalog and the process-wide redactor,
// so `run`, `validate` and `serve` resolve directives the same way.
func newLoader(p *process, catalog pipeline.Catalog) *execute.Loader {
	return &execute.Loader{
		Decoder:  configtext.Decoder{},
		Env:      osEnvironment{lookup: p.env.Lookup},
		Catalog:  catalog,
		Redactor: p.redactor,
	}
}
