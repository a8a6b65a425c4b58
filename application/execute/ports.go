package execute

import (
	"context"
	"log/slog"

	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/state"
)

// Page is one batch of records moving from a source to a sink. All rows share Columns;
// a row's values are nil, string, int64, float64, bool, time.Time, []byte, or (for JSON
// and arrays) map[string]any / []any.
type Page struct {
	Columns []string
	Rows    [][]any
	// Bookmark is the resume point once this page is confirmed; nil when the read is
	// not incremental. Sources set it so that rows sharing the last cursor value at the
	// page edge are never skipped on resume.
	Bookmark *state.Bookmark
	// Bytes approximates the page's size as read (for stats and metrics).
	Bytes int64
}

// Source yields pages. Implementations need not be safe for concurrent use: the executor
// calls Next from one goroutine.
type Source interface {
	// Next returns the next page, or io.EOF after the last one. A returned page is owned
	// by the caller; the source must not reuse its slices.
	Next(ctx context.Context) (*Page, error)
	// Close releases the source; it is called exactly once, whatever happened.
	Close() error
}

// Durability says when a sink's confirmed pages become final.
type Durability uint8

const (
	// PerPage sinks make each page final when Write returns nil (one transaction per
	// page); the bookmark is saved after every page.
	PerPage Durability = iota
	// AtEnd sinks make pages final only on Commit (a temp file renamed, an overwrite
	// transaction); the bookmark is saved once, after Commit.
	AtEnd
)

// Sink writes pages.
type Sink interface {
	// Write writes one page; nil means the page is confirmed.
	Write(ctx context.Context, p *Page) error
	// Commit makes every confirmed page final. Called once on success, and on
	// cancellation for PerPage sinks (which flush what they confirmed).
	Commit(ctx context.Context) error
	// Abort discards whatever is not final. Called on failure, and on cancellation for
	// AtEnd sinks; it must be safe after a failed Write and never leave output that
	// looks complete.
	Abort(ctx context.Context) error
	Durability() Durability
}

// ReadRequest is what a source is opened with.
type ReadRequest struct {
	// Config is the source block's config, validated against the connector's Spec with
	// defaults applied.
	Config    map[string]any
	BatchSize int
	// Incremental is set for `replication: incremental`; After is nil on a first run.
	Incremental *Incremental
	// BaseDir resolves relative paths (the config file's directory for `sluice run`).
	BaseDir string
	Log     *slog.Logger
}

// Incremental asks a source to read only rows past a bookmark, ordered by Cursor.
type Incremental struct {
	Cursor string
	After  *state.Bookmark
}

// WriteRequest is what a sink is opened with.
type WriteRequest struct {
	Config  map[string]any
	BaseDir string
	Log     *slog.Logger
}

// SourceConnector opens sources of one type.
type SourceConnector interface {
	OpenSource(ctx context.Context, req ReadRequest) (Source, error)
}

// SinkConnector opens sinks of one type.
type SinkConnector interface {
	OpenSink(ctx context.Context, req WriteRequest) (Sink, error)
}

// Registry is the set of connectors the executor can build from; the connectors
// adapter implements it. It is also the pipeline.Catalog used for validation.
type Registry interface {
	pipeline.Catalog
	Source(typ string) (SourceConnector, bool)
	Sink(typ string) (SinkConnector, bool)
}

// StateStore keeps bookmarks by state key.
type StateStore interface {
	// Load returns the bookmark under key, or nil when there is none.
	Load(ctx context.Context, key string) (*state.Bookmark, error)
	// Save replaces the bookmark under key. It must be atomic: a crash leaves either the
	// old or the new bookmark.
	Save(ctx context.Context, key string, b state.Bookmark) error
}
