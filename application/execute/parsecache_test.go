package execute_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/configtext"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
)

// countingDecoder decodes with the real decoder and counts the calls.
type countingDecoder struct{ calls atomic.Int64 }

func (d *countingDecoder) Decode(text []byte) (*pipeline.Node, error) {
	d.calls.Add(1)
	return configtext.Decoder{}.Decode(text)
}

func TestParseDecodesARepeatedTextOnceAndHandsOutPrivateTrees(t *testing.T) {
	t.Parallel()
	dec := &countingDecoder{}
	l := &execute.Loader{Decoder: dec}
	text := []byte("version: 1\nname: p\npipeline:\n  source: {type: generate}\n")

	first, err := l.Parse(text)
	require.NoError(t, err)
	first.Get("name").Value = "changed by a caller"
	second, err := l.Parse(text)
	require.NoError(t, err)
	require.EqualValues(t, 1, dec.calls.Load(), "the second parse of the same text is not decoded again")
	require.Equal(t, "p", second.Get("name").Value, "a caller's change to its tree never reaches another caller")
	require.NotEqual(t, string(first.CanonicalJSON()), string(second.CanonicalJSON()))

	_, err = l.Parse([]byte("version: [1\n"))
	require.Error(t, err)
	_, err = l.Parse([]byte("version: [1\n"))
	require.Error(t, err)
	require.EqualValues(t, 3, dec.calls.Load(), "a text that fails to decode is decoded each time")
}

func TestParseCacheIsBounded(t *testing.T) {
	t.Parallel()
	dec := &countingDecoder{}
	l := &execute.Loader{Decoder: dec}
	text := func(i int) []byte { return fmt.Appendf(nil, "version: 1\nname: p%d\n", i) }
	for i := range 65 {
		_, err := l.Parse(text(i))
		require.NoError(t, err)
	}
	require.EqualValues(t, 65, dec.calls.Load())
	_, err := l.Parse(text(64))
	require.NoError(t, err)
	require.EqualValues(t, 65, dec.calls.Load(), "the newest texts are kept")
	_, err = l.Parse(text(0))
	require.NoError(t, err)
	require.EqualValues(t, 66, dec.calls.Load(), "the oldest was evicted past 64 entries")

	big := append([]byte("version: 1\nname: big\ndescription: "), make([]byte, 40<<10)...)
	for i := range big[34:] {
		big[34+i] = 'x'
	}
	for range 2 {
		_, err := l.Parse(big)
		if err != nil && !errors.As(err, new(*pipeline.SyntaxError)) {
			require.NoError(t, err)
		}
	}
	require.EqualValues(t, 68, dec.calls.Load(), "a large text is decoded each time, never kept")
}

// TestLoadResolvesEachRunOnItsOwnTree loads one text with different params: the text is
// decoded once, and each Load resolves its own tree (Load resolves in place the tree Parse
// handed it), so no run sees another's values.
func TestLoadResolvesEachRunOnItsOwnTree(t *testing.T) {
	t.Parallel()
	dec := &countingDecoder{}
	l := newLoader(&loadEnv{}, nil)
	l.Decoder = dec
	text := []byte(strings.Replace(paramsConfig, "name: x", "name: orders-${param.region}", 1))
	for _, tc := range []struct {
		region, n string
		batch     int64
	}{{"eu", "7", 7}, {"us", "9", 9}, {"eu", "", 5}} {
		params := map[string]string{"region": tc.region}
		if tc.n != "" {
			params["n"] = tc.n
		}
		cfg, err := l.Load(context.Background(), text, execute.LoadOptions{Params: params})
		require.NoError(t, err)
		require.Equal(t, "orders-"+tc.region, cfg.Name)
		require.Equal(t, tc.batch, cfg.Source.Int("batch_size", 0))
	}
	require.EqualValues(t, 1, dec.calls.Load())
}
