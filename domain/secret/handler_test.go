package secret_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/domain/secret"
)

const tok = "tok-9f8e7d6c5b"

type creds struct{ User, Password string }

type lazy struct{}

func (lazy) LogValue() slog.Value { return slog.StringValue("lazy " + tok) }

func newLogger(t *testing.T) (*slog.Logger, *secret.Redactor, *bytes.Buffer) {
	t.Helper()
	var buf bytes.Buffer
	r := secret.NewRedactor()
	r.Register(tok)
	return slog.New(secret.NewHandler(slog.NewJSONHandler(&buf, nil), r)), r, &buf
}

func decode(t *testing.T, buf *bytes.Buffer) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(buf.Bytes(), &m), buf.String())
	return m
}

func TestHandlerRedactsEverything(t *testing.T) {
	t.Parallel()
	log, _, buf := newLogger(t)
	log.Info("connecting with "+tok,
		"plain", tok,
		"dsn", "postgres://app:hunter22@db/x",
		"err", fmt.Errorf("open: %w", errors.New("auth failed for "+tok)),
		"nested", slog.GroupValue(slog.String("deep", "x"+tok), slog.Group("deeper", "v", tok)),
		"struct", creds{User: "app", Password: tok},
		"bytes", []byte(tok),
		"lazy", lazy{},
		"count", 42,
		"clean", creds{User: "app", Password: "none"},
	)
	out := buf.String()
	require.NotContains(t, out, tok)
	require.NotContains(t, out, "hunter22")
	m := decode(t, buf)
	require.Equal(t, "connecting with ***", m["msg"])
	require.Equal(t, "***", m["plain"])
	require.Equal(t, "postgres://app:***@db/x", m["dsn"])
	require.Equal(t, "open: auth failed for ***", m["err"])
	require.Equal(t, map[string]any{"deep": "x***", "deeper": map[string]any{"v": "***"}}, m["nested"])
	require.Equal(t, "{app ***}", m["struct"])
	require.Equal(t, "***", m["bytes"])
	require.Equal(t, "lazy ***", m["lazy"])
	require.Equal(t, float64(42), m["count"], "clean values keep their kind")
	require.Equal(t, map[string]any{"User": "app", "Password": "none"}, m["clean"], "clean values are rendered by the inner handler")
}

func TestHandlerWithAttrsAndGroups(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	r := secret.NewRedactor()
	log := slog.New(secret.NewHandler(slog.NewJSONHandler(&buf, nil), r))
	log = log.With("run", "r1", "token", "late-secret-1").WithGroup("req").With("auth", "Bearer late-secret-1").WithGroup("")

	// Registered after the logger was built: still masked.
	r.Register("late-secret-1")
	log.Info("m", "k", "v")

	m := decode(t, &buf)
	require.Equal(t, "r1", m["run"])
	require.Equal(t, "***", m["token"])
	require.Equal(t, map[string]any{"auth": "Bearer ***", "k": "v"}, m["req"])
	require.NotContains(t, buf.String(), "late-secret-1")
}

func TestHandlerMatchesPlainShape(t *testing.T) {
	t.Parallel()
	// Without secrets, the output is what the inner handler writes on its own.
	var plain, wrapped bytes.Buffer
	opts := &slog.HandlerOptions{ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == slog.TimeKey {
			return slog.Attr{}
		}
		return a
	}}
	build := func(h slog.Handler) *slog.Logger {
		return slog.New(h).With("a", 1).WithGroup("g").With("b", "two").WithGroup("h")
	}
	build(slog.NewJSONHandler(&plain, opts)).Warn("hello", "c", true, slog.Group("d", "e", 1.5))
	build(secret.NewHandler(slog.NewJSONHandler(&wrapped, opts), secret.NewRedactor())).Warn("hello", "c", true, slog.Group("d", "e", 1.5))
	require.JSONEq(t, plain.String(), wrapped.String())
}

func TestHandlerEnabled(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	h := secret.NewHandler(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn}), secret.NewRedactor())
	require.False(t, h.Enabled(context.Background(), slog.LevelInfo))
	require.True(t, h.Enabled(context.Background(), slog.LevelError))
	slog.New(h).Info("dropped")
	require.Empty(t, buf.String())
}

func TestHandlerConcurrent(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var buf bytes.Buffer
	r := secret.NewRedactor()
	base := slog.New(secret.NewHandler(slog.NewTextHandler(&lockedWriter{mu: &mu, w: &buf}, nil), r)).With("member", "m1")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			v := fmt.Sprintf("run-secret-%d", i)
			r.Register(v)
			l := base.With("run", i).WithGroup("g")
			for range 50 {
				l.Info("using "+v, "v", v)
			}
		})
	}
	wg.Wait()
	out := buf.String()
	require.NotContains(t, out, "run-secret-")
	require.Equal(t, 8*50, strings.Count(out, "msg=\"using ***\""))
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
