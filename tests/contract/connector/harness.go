package connector

import (
	"testing"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// Harness describes one connector in one configuration (e.g. file with CSV) to the suite.
type Harness struct {
	Name string
	// Spec is the connector's Spec; its roles must match NewSource / NewSink.
	Spec pipeline.Spec
	// NewSource prepares input holding data and returns how to read it. Connectors that
	// make up their own rows (generate) produce len(data.Rows) rows and say which. nil
	// when the connector is not a source.
	NewSource func(t *testing.T, data Dataset) SourceCase
	// BrokenSource returns a source config that must fail (at open or on the first
	// Next) with an error containing Want. Optional.
	BrokenSource func(t *testing.T) BrokenCase
	// NewSink prepares an empty destination. nil when the connector is not a sink.
	NewSink func(t *testing.T) SinkCase
	Caps    Capabilities
}

// Capabilities are the optional behaviours the suite checks when set.
type Capabilities struct {
	// Incremental: the source honours ReadRequest.Incremental with cursor "id".
	Incremental bool
	// Upsert, Delete, Overwrite: the sink supports write_mode upsert / delete (with
	// key: [id]) / overwrite.
	Upsert, Delete, Overwrite bool
	// ExactlyOnce: the sink is an execute.FencedSink; the suite runs exactly-once jobs
	// through the executor, re-executes a completed run as a lost finish would and
	// checks that it adds nothing (SPEC §1.7), also shard by shard.
	ExactlyOnce bool
	// ConcurrentCreate: the sink's config creates its table (create_table: true), and
	// several runs creating it at the same moment must all succeed.
	ConcurrentCreate bool
	// Reaches says what the connector touches through the confinement port; the suite
	// checks it asks the port for exactly that (SPEC §14.1).
	Reaches Reaches
}

// Dataset is a set of rows sharing columns.
type Dataset struct {
	Columns []string
	Rows    [][]any
}

// SourceCase is one prepared source.
type SourceCase struct {
	Source  execute.SourceConnector
	Config  map[string]any
	BaseDir string
	// Want is what reading must yield, in order, typed as the source types values.
	Want Dataset
}

// BrokenCase is a source config that must fail.
type BrokenCase struct {
	Source  execute.SourceConnector
	Config  map[string]any
	BaseDir string
	Want    string // a substring of the error, e.g. the file name and line
}

// SinkCase is one prepared, empty destination.
type SinkCase struct {
	Sink    execute.SinkConnector
	Config  map[string]any
	BaseDir string
	// ReadBack returns the rows that are final at the destination, values in the order
	// of columns and rows in write order, and whether any output exists at all (a file,
	// a table, bytes on a stream).
	ReadBack func(t *testing.T, columns []string) (rows [][]any, exists bool)
	// Normalize maps a written value onto what ReadBack returns for it (e.g. CSV turns
	// everything into text). nil means values come back unchanged.
	Normalize func(v any) any
	// Leftovers lists temporary artifacts that must be gone after Commit or Abort.
	// Optional.
	Leftovers func(t *testing.T) []string
	// KeepsSent marks an AtEnd sink that streams to a log it cannot take messages back
	// from (Kafka without a transaction): after Abort, what the brokers already took may
	// stay. The suite then checks that whatever stays is a prefix of the confirmed rows,
	// in order and once each, instead of checking that nothing stays.
	KeepsSent bool
}

// Run runs the suite.
func Run(t *testing.T, h Harness) {
	t.Helper()
	t.Run("spec", func(t *testing.T) {
		t.Parallel()
		checkSpec(t, h)
	})
	if h.NewSource != nil {
		runSource(t, h)
	}
	if h.NewSink != nil {
		runSink(t, h)
	}
	runReach(t, h)
}
