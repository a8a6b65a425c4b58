package stdout_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/connectors/stdout"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/secret"
	"github.com/sluicehq/sluice/tests/contract/connector"
)

// syncBuffer is a bytes.Buffer safe for the parallel subtests' reads.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) Bytes() []byte {
	b.mu.Lock()
	defer b.mu.Unlock()
	return bytes.Clone(b.buf.Bytes())
}

func TestContract(t *testing.T) {
	t.Parallel()
	connector.Run(t, connector.Harness{
		Name: "stdout",
		Spec: stdout.New().Spec(),
		NewSink: func(t *testing.T) connector.SinkCase {
			var out syncBuffer
			return connector.SinkCase{
				Sink:   stdout.New(stdout.WithWriter(&out)),
				Config: map[string]any{},
				ReadBack: func(t *testing.T, cols []string) ([][]any, bool) {
					data := out.Bytes()
					return connector.ParseJSONL(t, data, cols), len(data) > 0
				},
				Normalize: connector.JSONValue,
			}
		},
	})
}

func TestWritesJSONLinesInColumnOrder(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	s, err := stdout.New(stdout.WithWriter(&out)).OpenSink(context.Background(), execute.WriteRequest{})
	require.NoError(t, err)
	require.Equal(t, execute.PerPage, s.Durability())
	at := time.Date(2025, 1, 2, 3, 4, 5, 600, time.UTC)
	require.NoError(t, s.Write(context.Background(), &execute.Page{
		Columns: []string{"z", "a", "t", "b", "f", "n"},
		Rows: [][]any{
			{int64(1), "x\"y\n", at, []byte("hi"), 2.0, nil},
			{int64(2), "<&>", at, []byte{}, 0.5, true},
		},
	}))
	require.Equal(t,
		`{"z":1,"a":"x\"y\n","t":"2025-01-02T03:04:05.0000006Z","b":"aGk=","f":2.0,"n":null}`+"\n"+
			`{"z":2,"a":"<&>","t":"2025-01-02T03:04:05.0000006Z","b":"","f":0.5,"n":true}`+"\n",
		out.String())
	require.NoError(t, s.Commit(context.Background()))
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

func TestWriterErrorIsReported(t *testing.T) {
	t.Parallel()
	s, err := stdout.New(stdout.WithWriter(failingWriter{})).OpenSink(context.Background(), execute.WriteRequest{})
	require.NoError(t, err)
	err = s.Write(context.Background(), &execute.Page{Columns: []string{"a"}, Rows: [][]any{{int64(1)}}})
	require.ErrorContains(t, err, "stdout: write page: broken pipe")
}

type flushWriter struct {
	bytes.Buffer
	flushes int
}

func (f *flushWriter) Flush() error { f.flushes++; return nil }

func TestFlushesEveryPage(t *testing.T) {
	t.Parallel()
	w := &flushWriter{}
	s, err := stdout.New(stdout.WithWriter(w)).OpenSink(context.Background(), execute.WriteRequest{})
	require.NoError(t, err)
	for range 3 {
		require.NoError(t, s.Write(context.Background(), &execute.Page{Columns: []string{"a"}, Rows: [][]any{{"x"}}}))
	}
	require.Equal(t, 3, w.flushes)
}

func TestConcurrentSinksNeverInterleaveWithinAPage(t *testing.T) {
	t.Parallel()
	var out syncBuffer
	c := stdout.New(stdout.WithWriter(&out))
	page := func(v string) *execute.Page {
		p := &execute.Page{Columns: []string{"v"}}
		for range 200 {
			p.Rows = append(p.Rows, []any{v})
		}
		return p
	}
	var wg sync.WaitGroup
	for _, v := range []string{"a", "b", "c"} {
		wg.Go(func() {
			s, _ := c.OpenSink(context.Background(), execute.WriteRequest{})
			for range 5 {
				_ = s.Write(context.Background(), page(v))
			}
		})
	}
	wg.Wait()
	lines := bytes.Split(bytes.TrimSuffix(out.Bytes(), []byte("\n")), []byte("\n"))
	require.Len(t, lines, 3*5*200)
	for i := 0; i < len(lines); i += 200 {
		for _, l := range lines[i : i+200] {
			require.Equal(t, lines[i], l, "a page's lines are contiguous")
		}
	}
}

// SPEC §14.1: in serve every line passes through the redactor, so a row carrying a
// secret value (in any encoding the redactor knows) or a URL password never reaches the
// server's output in clear.
func TestRedactorSeesEveryLine(t *testing.T) {
	t.Parallel()
	red := secret.NewRedactor()
	red.Register("hunter2-secret")
	var out bytes.Buffer
	s, err := stdout.New(stdout.WithWriter(&out), stdout.WithRedactor(red.Redact)).OpenSink(context.Background(), execute.WriteRequest{})
	require.NoError(t, err)
	require.NoError(t, s.Write(context.Background(), &execute.Page{
		Columns: []string{"id", "v"},
		Rows: [][]any{
			{int64(1), "token=hunter2-secret"},
			{int64(2), "postgres://app:pa55word@db/wh"},
			{int64(3), "plain"},
		},
	}))
	got := out.String()
	require.NotContains(t, got, "hunter2-secret")
	require.NotContains(t, got, "pa55word")
	require.Contains(t, got, `{"id":3,"v":"plain"}`+"\n")
	require.Equal(t, 3, strings.Count(got, "\n"), "one line per row, each ended")
}
