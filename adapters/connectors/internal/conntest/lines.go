package conntest

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/internal/jsonlines"
	"github.com/sluicehq/sluice/application/execute"
)

// ReadLines opens a source of c, switches it to JSON-line pages (it must offer them) and
// reads it to the end: the pages and the first error (nil at the end).
func ReadLines(t testing.TB, c execute.SourceConnector, req execute.ReadRequest) ([]*execute.Page, error) {
	t.Helper()
	ctx := context.Background()
	src, err := c.OpenSource(ctx, req)
	require.NoError(t, err)
	defer src.Close()
	ps, ok := src.(execute.PassthroughSource)
	require.True(t, ok, "the source can pass pages through")
	e, ok := ps.Encoding()
	require.True(t, ok, "the source offers JSON lines")
	require.Equal(t, jsonlines.Format, e.Format)
	require.NoError(t, ps.UseEncoding(ctx))
	var pages []*execute.Page
	for {
		p, err := src.Next(ctx)
		if errors.Is(err, io.EOF) {
			return pages, nil
		}
		if err != nil {
			return pages, err
		}
		require.NotNil(t, p.Encoded, "a switched source yields encoded pages")
		require.Nil(t, p.Rows)
		require.Equal(t, jsonlines.Format, p.Encoded.Format)
		require.Equal(t, jsonlines.Count(p.Encoded.Data), p.Encoded.Rows, "Rows counts the lines")
		pages = append(pages, p)
	}
}

// Lines are the lines of JSON-line pages, in order.
func Lines(pages []*execute.Page) []string {
	var out []string
	for _, p := range pages {
		jsonlines.Lines(p.Encoded.Data, func(l []byte) { out = append(out, string(l)) })
	}
	return out
}

// Offers reports whether a source of c opened with req offers JSON-line pages.
func Offers(t testing.TB, c execute.SourceConnector, req execute.ReadRequest) bool {
	t.Helper()
	src, err := c.OpenSource(context.Background(), req)
	require.NoError(t, err)
	defer src.Close()
	ps, ok := src.(execute.PassthroughSource)
	if !ok {
		return false
	}
	_, ok = ps.Encoding()
	return ok
}

// LinePage is a JSON-line page of the given objects, one per line.
func LinePage(objects ...string) *execute.Page {
	var data []byte
	for _, o := range objects {
		data = append(append(data, o...), '\n')
	}
	return &execute.Page{Encoded: &execute.Encoded{Format: jsonlines.Format, Data: data, Rows: len(objects)}}
}
