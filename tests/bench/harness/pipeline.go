package harness

import (
	"fmt"
	"os"

	"gopkg.in/yaml.v3"
)

// Pipeline is the part of a sluice config a benchmark varies: a name, a source and a sink.
type Pipeline struct {
	Name   string
	Source Connector
	Sink   Connector
}

// Connector is one end of a pipeline: a connector type and its config keys.
type Connector struct {
	Type   string         `yaml:"type"`
	Config map[string]any `yaml:"config"`
}

// YAML renders the pipeline as a version 1 sluice config. Marshalling (rather than
// formatting text) quotes paths and URLs correctly whatever they contain.
func (p Pipeline) YAML() ([]byte, error) {
	doc := struct {
		Version  int    `yaml:"version"`
		Name     string `yaml:"name"`
		Pipeline struct {
			Source Connector `yaml:"source"`
			Sink   Connector `yaml:"sink"`
		} `yaml:"pipeline"`
	}{Version: 1, Name: p.Name}
	doc.Pipeline.Source, doc.Pipeline.Sink = p.Source, p.Sink
	out, err := yaml.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("pipeline %s: %w", p.Name, err)
	}
	return out, nil
}

// WritePipeline writes p to NAME.yaml in the temp directory and returns that file name
// (relative, since pipelines run with the temp directory as their working directory).
func (e *Env) WritePipeline(p Pipeline) (string, error) {
	text, err := p.YAML()
	if err != nil {
		return "", err
	}
	name := p.Name + ".yaml"
	if err := os.WriteFile(e.Path(name), text, 0o644); err != nil {
		return "", fmt.Errorf("write pipeline: %w", err)
	}
	return name, nil
}
