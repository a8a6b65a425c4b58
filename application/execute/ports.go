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
	// Encoded, when set, holds the page's rows in a wire format instead of Rows (which
	// is then nil). Only a PassthroughSource the executor switched with UseEncoding
	// produces such pages, and only for a sink that accepted the encoding.
	Encoded *Encoded
}

// Len is the number of rows in the page, decoded or encoded.
func (p *Page) Len() int {
	if p.Encoded != nil {
		return p.Encoded.Rows
	}
	return len(p.Rows)
}

// Encoded is a page's rows in a wire format that a source and a sink of the same database
// family share (e.g. PostgreSQL COPY text), so rows pass through without being decoded.
type Encoded struct {
	Format string
	Data   []byte
	Rows   int
}

// Encoding is what a PassthroughSource offers: the wire format of its pages, the columns
// of every row in order, and their types as the source database names them (so a sink
// that creates its table can use the same types).
type Encoding struct {
	Format  string
	Columns []string
	Types   []string
}

// PassthroughSource is a source that can hand pages over encoded instead of decoded. The
// executor switches it only when the sink accepts the encoding, so no connector ever
// sees a page it cannot read.
type PassthroughSource interface {
	Source
	// Encoding describes the pages the source can switch to; ok is false when it cannot
	// (e.g. an incremental read, which needs decoded cursor values).
	Encoding() (e Encoding, ok bool)
	// UseEncoding switches the source to encoded pages. It is called at most once,
	// before the first Next.
	UseEncoding(ctx context.Context) error
}

// PassthroughSink is a sink that can write encoded pages.
type PassthroughSink interface {
	Sink
	// AcceptEncoding reports whether the sink writes pages of e exactly as it would write
	// the same rows decoded (same table, columns and write mode). It is called at most
	// once, before the first Write; true commits the sink to encoded pages. Accepting may
	// change the sink's Durability (rows streamed into one statement become final
	// together), so the executor reads it again afterwards.
	AcceptEncoding(ctx context.Context, e Encoding) bool
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
	// Shard narrows the read to one shard of a sharded run; nil reads everything. Only
	// connectors that implement ShardPlanner are ever given one.
	Shard *ShardSlice
	// Reach is how the connector opens paths and dials hosts (SPEC §14.1); nil is
	// Unconfined (see ReachOf).
	Reach Reach
}

// Incremental asks a source to read only rows past a bookmark, ordered by Cursor.
type Incremental struct {
	Cursor string
	After  *state.Bookmark
	// Exact asks that every bookmark a page carries is exactly its last cursor value:
	// a page then never ends between rows that share a cursor value (it grows past
	// BatchSize until the value changes). Exactly-once delivery needs it, because a
	// bookmark that steps back (see Page.Bookmark) would make a resume write the tied
	// rows twice. A source that cannot keep a page edge exact sets no bookmark there.
	Exact bool
}

// WriteRequest is what a sink is opened with.
type WriteRequest struct {
	Config  map[string]any
	BaseDir string
	Log     *slog.Logger
	// Bookmarks says the run saves a bookmark after confirmed pages (an incremental
	// read), so a page must be final when Write returns. Without bookmarks nothing is
	// gained by that, and a sink may make all pages final together on Commit instead
	// (Durability AtEnd), which also leaves nothing behind when the run fails.
	Bookmarks bool
	// Reach is how the connector opens paths and dials hosts (SPEC §14.1); nil is
	// Unconfined (see ReachOf).
	Reach Reach
	// Run is the job's Job.Run ("" for `sluice run`) and Shard its shard (nil when not
	// sharded): a sink writing objects names them after both, so a re-executed run
	// overwrites its own output instead of adding to it.
	Run   string
	Shard *ShardSlice
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

// Position is how far an exactly-once delivery got: every row up to Bookmark (nil: none,
// the source's beginning) plus the next Rows rows the source yields after it. A resume
// reads after Bookmark and drops the first Rows rows, which therefore must come in the
// same order again (a full read of a query with ORDER BY, a file, a seeded generator).
type Position struct {
	Bookmark *state.Bookmark
	Rows     int64
	// CompletedBy is the run (Job.Run) that read its source to the end at this position;
	// "" while a read is in progress. A re-execution of that same run finds its read
	// already delivered and writes nothing; any other run resumes from the position (a
	// full read therefore starts over, an incremental one continues after Bookmark).
	CompletedBy string
}

// Watermark is a fenced sink's record under one state key: the fencing epoch this writer
// holds and the position the sink has durably written.
type Watermark struct {
	Epoch    int64
	Position Position
}

// FencedSink is a sink that delivers exactly once (SPEC §1.7): its watermark row lives in
// the sink's own database and commits in the same transaction as the rows, so the
// position can never disagree with what was written, and an epoch in that row fences
// every older writer of the same key.
type FencedSink interface {
	Sink
	// Fence atomically increments the epoch of key's watermark (creating the row at epoch
	// 1), keeps the new epoch for this sink's later writes and returns it with the stored
	// position. It is called once, before any write; from then on every writer of key that
	// fenced earlier is refused. A fenced sink may report another Durability than before;
	// the executor reads it again.
	Fence(ctx context.Context, key string) (Watermark, error)
	// WriteAt writes p and records pos as the watermark's position: for PerPage sinks in
	// one transaction, for AtEnd sinks into the transaction CommitAt ends. The transaction
	// commits only while the watermark's epoch is still this sink's; otherwise nothing of
	// it stays and the error wraps run.ErrLeaseLost.
	WriteAt(ctx context.Context, p *Page, pos Position) error
	// CommitAt records pos as the position (fenced the same way) and makes every
	// confirmed page final; it replaces Commit. A lost fence wraps run.ErrLeaseLost.
	// Every position a sink records, CompletedBy included, is what Fence returns next.
	CommitAt(ctx context.Context, pos Position) error
}
