package cli_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/adapters/cli"
	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/secret"
	"github.com/sluicehq/sluice/domain/state"
)

type fakeLoader struct {
	cfg  *pipeline.Config
	err  error
	mu   sync.Mutex
	opts execute.LoadOptions
	text string
}

func (f *fakeLoader) Load(_ context.Context, text []byte, opts execute.LoadOptions) (*pipeline.Config, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opts, f.text = opts, string(text)
	return f.cfg, f.err
}

type fakeRunner struct {
	stats    execute.Stats
	err      error
	probeErr error
	progress []execute.Stats
	job      execute.Job
	probed   bool
	cancel   bool // wait for the context to end, like a run interrupted by a signal
}

func (f *fakeRunner) Run(ctx context.Context, job execute.Job) (execute.Stats, error) {
	f.job = job
	for _, s := range f.progress {
		job.Progress(s)
	}
	if job.Log != nil {
		job.Log.Info("connector says hello", "url", "postgres://bob:hunter2@db/x")
	}
	if f.cancel {
		<-ctx.Done()
		return f.stats, ctx.Err()
	}
	return f.stats, f.err
}

func (f *fakeRunner) Probe(_ context.Context, job execute.Job) error {
	f.job, f.probed = job, true
	return f.probeErr
}

type memState struct{}

func (memState) Load(context.Context, string) (*state.Bookmark, error) { return nil, nil }
func (memState) Save(context.Context, string, state.Bookmark) error    { return nil }
func (memState) String() string                                        { return "mem" }

type harness struct {
	loader  *fakeLoader
	runner  *fakeRunner
	dataDir string
	redact  *secret.Redactor
	env     map[string]string
	stdin   string
	term    bool
}

func newHarness() *harness {
	return &harness{
		loader: &fakeLoader{cfg: &pipeline.Config{
			Version: 1, Name: "orders",
			Replication: pipeline.Replication{Type: pipeline.Full},
			Source:      pipeline.Connector{Type: "file", Config: map[string]any{"path": "in.csv"}},
			Sink:        pipeline.Connector{Type: "sqlite", Config: map[string]any{"table_name": "t"}},
		}},
		runner: &fakeRunner{stats: execute.Stats{RowsRead: 100000, RowsWritten: 100000, Pages: 10, Elapsed: 1200 * time.Millisecond}},
		redact: secret.NewRedactor(),
		env:    map[string]string{},
	}
}

func (h *harness) exec(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	local := cli.Local{
		Loader:   h.loader,
		Executor: h.runner,
		OpenState: func(_ context.Context, st pipeline.State, dataDir string) (execute.StateStore, error) {
			if st.Type == pipeline.StatePostgres {
				return nil, pipeline.Errors{{Path: "pipeline.state.type", Message: "not available"}}
			}
			h.dataDir = dataDir
			return memState{}, nil
		},
		Redactor:      h.redact,
		Now:           func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) },
		IsTerminal:    func(io.Writer) bool { return h.term },
		ProgressEvery: time.Second,
	}
	info := cli.Info{Version: "v1.2.3", Commit: "abc123", GoVersion: "go1.26", Platform: "linux/amd64"}
	root := cli.NewRoot(info)
	root.AddCommand(cli.NewRunCommand(local), cli.NewValidateCommand(local), cli.NewVersionCommand(info))
	var stdout, stderr bytes.Buffer
	env := cli.Env{
		Lookup: func(k string) (string, bool) { v, ok := h.env[k]; return v, ok },
		Stdin:  bytes.NewBufferString(h.stdin), Stdout: &stdout, Stderr: &stderr,
	}
	code := cli.Execute(context.Background(), root, args, env)
	return code, stdout.String(), stderr.String()
}

func configFile(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "pipe.yaml")
	require.NoError(t, os.WriteFile(path, []byte("version: 1\n"), 0o600))
	return path
}

var errBoom = errors.New("boom")
