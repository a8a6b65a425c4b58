package execute_test

import (
	"context"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/execute"
)

// encSource yields two rows per page, encoded once switched.
type encSource struct {
	offer   bool
	pages   int
	next    int
	encoded bool
}

func (s *encSource) OpenSource(context.Context, execute.ReadRequest) (execute.Source, error) {
	return s, nil
}

func (s *encSource) Next(context.Context) (*execute.Page, error) {
	if s.next == s.pages {
		return nil, io.EOF
	}
	s.next++
	if s.encoded {
		return &execute.Page{Encoded: &execute.Encoded{Format: "lines", Data: []byte("a\nb\n"), Rows: 2}, Bytes: 4}, nil
	}
	return &execute.Page{Columns: []string{"id"}, Rows: [][]any{{int64(1)}, {int64(2)}}, Bytes: 16}, nil
}

func (s *encSource) Close() error { return nil }

func (s *encSource) Encoding() (execute.Encoding, bool) {
	return execute.Encoding{Format: "lines", Columns: []string{"id"}, Types: []string{"bigint"}}, s.offer
}

func (s *encSource) UseEncoding(context.Context) error {
	s.encoded = true
	return nil
}

// encSink accepts the "lines" format when accept is set, and then becomes AtEnd when
// atEndOnAccept is set.
type encSink struct {
	fencedSink
	accept        bool
	atEndOnAccept bool
	accepted      bool
	offered       *execute.Encoding
	encoded       int
	decoded       int
}

func (k *encSink) OpenSink(context.Context, execute.WriteRequest) (execute.Sink, error) {
	return k, nil
}

func (k *encSink) AcceptEncoding(_ context.Context, e execute.Encoding) bool {
	k.offered = &e
	k.accepted = k.accept && e.Format == "lines"
	return k.accepted
}

func (k *encSink) Durability() execute.Durability {
	if k.accepted && k.atEndOnAccept {
		return execute.AtEnd
	}
	return execute.PerPage
}

func (k *encSink) Abort(context.Context) error {
	k.aborted++
	return nil
}

func (k *encSink) Write(_ context.Context, p *execute.Page) error {
	k.count(p)
	return nil
}

func (k *encSink) WriteAt(_ context.Context, p *execute.Page, pos execute.Position) error {
	k.count(p)
	k.positions = append(k.positions, pos)
	return nil
}

func (k *encSink) Commit(context.Context) error { return nil }

func (k *encSink) count(p *execute.Page) {
	if p.Encoded != nil {
		k.encoded++
	} else {
		k.decoded++
	}
}

func TestPassthroughWhenBothAgree(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		offer, accept bool
		encoded       int
	}{
		{"both agree", true, true, 3},
		{"sink declines", true, false, 0},
		{"source offers nothing", false, true, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := &encSource{offer: tc.offer, pages: 3}
			snk := &encSink{accept: tc.accept}
			ex := &execute.Executor{Registry: &anyRegistry{src: src, snk: snk}}
			stats, err := ex.Run(context.Background(), execute.Job{Config: config(false)})
			require.NoError(t, err)
			require.Equal(t, tc.encoded, snk.encoded)
			require.Equal(t, 3-tc.encoded, snk.decoded)
			require.Equal(t, int64(6), stats.RowsWritten, "encoded pages count their rows")
			if tc.offer {
				require.Equal(t, []string{"bigint"}, snk.offered.Types)
			} else {
				require.Nil(t, snk.offered, "a source that offers nothing is not asked")
			}
		})
	}
}

func TestPassthroughExactlyOnce(t *testing.T) {
	t.Parallel()
	src := &encSource{offer: true, pages: 2}
	snk := &encSink{accept: true}
	ex := &execute.Executor{Registry: &anyRegistry{src: src, snk: snk}}
	_, err := ex.Run(context.Background(), execute.Job{Config: exactlyOnce(false), StateKey: key})
	require.NoError(t, err)
	require.Equal(t, 2, snk.encoded)
	require.Equal(t, []execute.Position{{Rows: 2}, {Rows: 4}}, snk.positions)

	// A resume that must drop delivered rows needs decoded pages.
	src = &encSource{offer: true, pages: 2}
	snk = &encSink{accept: true}
	snk.wm.Position.Rows = 1
	ex = &execute.Executor{Registry: &anyRegistry{src: src, snk: snk}}
	stats, err := ex.Run(context.Background(), execute.Job{Config: exactlyOnce(false), StateKey: key})
	require.NoError(t, err)
	require.Zero(t, snk.encoded)
	require.Nil(t, snk.offered)
	require.Equal(t, int64(3), stats.RowsWritten)
}

func TestAcceptingMayMakeTheSinkAtEnd(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	src := &encSource{offer: true, pages: 100}
	snk := &encSink{accept: true, atEndOnAccept: true}
	ex := &execute.Executor{Registry: &anyRegistry{src: src, snk: snk}}
	_, err := ex.Run(ctx, execute.Job{Config: config(false), Progress: func(s execute.Stats) {
		if s.Pages == 2 {
			cancel()
		}
	}})
	require.ErrorIs(t, err, context.Canceled)
	require.Equal(t, 1, snk.aborted, "a stop aborts the sink that became AtEnd instead of committing it")
}

// reqSink records what it was opened with.
type reqSink struct {
	fakeSink
	req execute.WriteRequest
}

func (k *reqSink) OpenSink(_ context.Context, r execute.WriteRequest) (execute.Sink, error) {
	k.req = r
	return k, nil
}

func TestWriteRequestSaysWhetherPagesCarryBookmarks(t *testing.T) {
	t.Parallel()
	for _, incremental := range []bool{false, true} {
		snk := &reqSink{}
		ex := &execute.Executor{Registry: &anyRegistry{src: &fakeSource{pages: 1, rowsPerPage: 1}, snk: snk}}
		_, err := ex.Run(context.Background(), execute.Job{Config: config(incremental), StateKey: key, State: newMemState(), BaseDir: "/b"})
		require.NoError(t, err)
		require.Equal(t, incremental, snk.req.Bookmarks)
		require.Equal(t, "/b", snk.req.BaseDir)
	}
}
