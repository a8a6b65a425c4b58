package http

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	nethttp "net/http"
	"net/url"
	"time"

	"github.com/sluicehq/sluice/adapters/connectors/internal/cfg"
	"github.com/sluicehq/sluice/adapters/connectors/internal/cursor"
	"github.com/sluicehq/sluice/adapters/connectors/internal/records"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/state"
)

// OpenSource checks the config and fetches the first page, so an unreachable or refused
// host, a wrong credential or a records_path that is no array fails at open.
func (c *Connector) OpenSource(ctx context.Context, req execute.ReadRequest) (execute.Source, error) {
	o, err := optionsOf(req.Config)
	if err != nil {
		return nil, fmt.Errorf("http: %w", err)
	}
	batch, err := cfg.BatchSize(req.BatchSize, req.Config)
	if err != nil {
		return nil, fmt.Errorf("http: %w", err)
	}
	s := &source{o: o, batch: batch, client: c.clientFor(execute.ReachOf(req.Reach)), log: req.Log, check: c.checkURL}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.pageNo = o.page.start
	if inc := req.Incremental; inc != nil {
		if o.cursorParam == "" {
			return nil, errors.New(`http: incremental replication needs config key "cursor_param": the query parameter that sends the bookmark to the API`)
		}
		s.cursorCol, s.exact = inc.Cursor, inc.Exact
		if inc.After != nil {
			s.after = inc.After.Value
		}
	}
	if err := s.fetch(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

type source struct {
	o      options
	batch  int
	client *nethttp.Client
	check  func(context.Context, *url.URL) error
	log    *slog.Logger

	cursorCol string // replication.cursor; "" for a full read
	after     any    // the bookmark value sent as cursor_param
	exact     bool

	// Pagination state.
	requests int      // answers fetched so far; the page number errors name
	next     *url.URL // link_header: the next URL
	cursor   string   // cursor pagination: the next cursor
	offset   int64
	pageNo   int64
	done     bool // no request is left to send
	last     time.Time

	queue []records.Object // records fetched and not yet handed out
	ended bool
}

// Next returns up to batch records; pages of the API and pages of the run are
// independent, so an API answer may span several run pages and the reverse.
func (s *source) Next(ctx context.Context) (*execute.Page, error) {
	if s.ended {
		return nil, io.EOF
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var b records.Builder
	var values []any
	take := func() error {
		o := s.queue[0]
		s.queue = s.queue[1:]
		if s.cursorCol != "" {
			v, ok := o[s.cursorCol]
			if !ok || v == nil {
				return fmt.Errorf("http: page %d: a record has no value in field %q (replication.cursor)", s.requests, s.cursorCol)
			}
			values = append(values, v)
		}
		b.Add(o)
		return nil
	}
	for b.Len() < s.batch {
		if err := s.fill(ctx); err != nil {
			return nil, err
		}
		if len(s.queue) == 0 {
			break
		}
		if err := take(); err != nil {
			return nil, err
		}
	}
	if b.Len() == 0 {
		s.ended = true
		return nil, io.EOF
	}
	var bookmark *state.Bookmark
	if s.cursorCol != "" {
		if err := s.fill(ctx); err != nil {
			return nil, err
		}
		// An exact read keeps records that share the last cursor value on one page, so
		// the page's bookmark is exactly its last value (execute.Incremental.Exact).
		for s.exact && len(s.queue) > 0 && cursor.Compare(s.queue[0][s.cursorCol], values[len(values)-1]) == 0 {
			if err := take(); err != nil {
				return nil, err
			}
			if err := s.fill(ctx); err != nil {
				return nil, err
			}
		}
		var next any
		if len(s.queue) > 0 {
			next = s.queue[0][s.cursorCol]
		}
		if v, ok := cursor.EdgeBookmark(values, next, len(s.queue) > 0); ok {
			bookmark = &state.Bookmark{Cursor: s.cursorCol, Value: cursor.BookmarkValue(v)}
		}
	}
	p := b.Page()
	p.Bookmark = bookmark
	return p, nil
}

// fill fetches the next answer when every fetched record was handed out.
func (s *source) fill(ctx context.Context) error {
	for len(s.queue) == 0 && !s.done {
		if err := s.fetch(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Close releases idle connections.
func (s *source) Close() error {
	s.client.CloseIdleConnections()
	return nil
}
