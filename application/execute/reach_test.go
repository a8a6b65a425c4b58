package execute_test

import (
	"context"
	"errors"
	"net"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/application/execute"
	"github.com/sluicehq/sluice/domain/pipeline"
	"github.com/sluicehq/sluice/domain/reach"
	"github.com/sluicehq/sluice/domain/run"
)

// pathRefuser refuses every path, naming the key it was given.
type pathRefuser struct{ execute.Unconfined }

func (pathRefuser) Path(_ context.Context, key, _, p string) (string, error) {
	return "", &reach.RefusedError{Kind: reach.ErrPathRefused, Key: key, Target: p, Reason: "not allowed"}
}

func (pathRefuser) Dial(_ context.Context, key, _, addr string) (net.Conn, error) {
	return nil, &reach.RefusedError{Kind: reach.ErrHostRefused, Key: key, Target: addr, Reason: "not allowed"}
}

// pathSource opens the path in its config through the request's Reach, as file
// connectors do.
type pathSource struct{ *fakeSource }

func (s pathSource) OpenSource(ctx context.Context, req execute.ReadRequest) (execute.Source, error) {
	if _, err := execute.ReachOf(req.Reach).Path(ctx, "path", req.BaseDir, "/etc/passwd"); err != nil {
		return nil, err
	}
	return s.fakeSource.OpenSource(ctx, req)
}

func (pathSource) Targets(pipeline.Role, map[string]any) []execute.Target {
	return []execute.Target{{Key: "path", Path: "/etc/passwd"}, {Key: "url", Host: "${env:H}"}}
}

type pathRegistry struct{ fakeRegistry }

func (r *pathRegistry) Source(typ string) (execute.SourceConnector, bool) {
	return pathSource{r.src}, typ == "fake"
}

// A refusal when a connector opens fails the run with the refusal's code (SPEC §14.1),
// the key prefixed with the connector block's path.
func TestRefusalAtOpenFailsWithItsCode(t *testing.T) {
	t.Parallel()
	reg := &pathRegistry{fakeRegistry{src: &fakeSource{pages: 1, rowsPerPage: 1}, snk: &fakeSink{}}}
	e := &execute.Executor{Registry: reg, Reach: pathRefuser{}}
	_, err := e.Run(context.Background(), execute.Job{Config: config(false)})
	var f *execute.Failure
	require.True(t, errors.As(err, &f), "%v", err)
	require.Equal(t, run.CodePathRefused, f.Code)
	require.ErrorContains(t, err, "pipeline.source.config.path")
	pages, _, _ := reg.snk.counts()
	require.Zero(t, pages)

	// Unconfined (sluice run), the same source opens.
	_, err = (&execute.Executor{Registry: reg}).Run(context.Background(), execute.Job{Config: config(false)})
	require.NoError(t, err)
}

// CheckTargets judges the literal targets a connector lists and leaves directives to
// the open-time check.
func TestCheckTargets(t *testing.T) {
	t.Parallel()
	reg := &pathRegistry{fakeRegistry{src: &fakeSource{}, snk: &fakeSink{}}}
	err := (&execute.Executor{Registry: reg, Reach: pathRefuser{}}).CheckTargets(context.Background(), config(false))
	require.ErrorIs(t, err, reach.ErrPathRefused)
	require.ErrorContains(t, err, "pipeline.source.config.path")
	require.NotErrorIs(t, err, reach.ErrHostRefused, "a value holding a directive is not judged at submit")
	require.NoError(t, (&execute.Executor{Registry: reg}).CheckTargets(context.Background(), config(false)))
	require.False(t, execute.Confined(execute.ReachOf(nil)))
	require.True(t, execute.Confined(pathRefuser{}))
}
