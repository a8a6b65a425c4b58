package configtext_test

import (
	"errors"
	"runtime"
	"testing"

	"github.com/sluicehq/sluice/adapters/configtext"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// FuzzDecode: any YAML or JSON text decodes to a map document or fails with a typed
// error (*pipeline.SyntaxError or pipeline.Errors), never panics, and allocates in
// proportion to the text — never the hundreds of MB a deeply nested text used to cost.
// The seeds in testdata/fuzz/FuzzDecode hold the inputs (nested lists 9,000 deep,
// an alias bomb, a NUL) and ordinary configs.
func FuzzDecode(f *testing.F) {
	f.Add([]byte("version: 1\nname: x\npipeline: {source: {type: generate}, sink: {type: stdout}}\n"))
	f.Add([]byte(`{"version": 1, "name": "x", "pipeline": [[[[1]]]]}`))
	f.Fuzz(func(t *testing.T, text []byte) {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		node, err := configtext.Decode(text)
		runtime.ReadMemStats(&after)
		var syn *pipeline.SyntaxError
		var fields pipeline.Errors
		switch {
		case err == nil && (node == nil || node.Kind != pipeline.KindMap):
			t.Fatalf("decoded without error to a non-map document")
		case err != nil && !errors.As(err, &syn) && !errors.As(err, &fields):
			t.Fatalf("untyped error %T: %v", err, err)
		}
		// Generous: 400 bytes per input byte plus 32 MiB covers an alias bomb expanded up
		// to the node limit (about 12 MB); a per-level cost of a deep text is far beyond.
		if grew := after.TotalAlloc - before.TotalAlloc; grew > uint64(400*len(text))+32<<20 {
			t.Fatalf("decoding %d bytes allocated %d bytes", len(text), grew)
		}
	})
}
