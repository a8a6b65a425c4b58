package e2e_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/sluicehq/sluice/tests/e2e"
)

// TestMCPOverStdio drives `sluice mcp` with the SDK's CommandTransport, as an agent
// would, against a real `sluice serve --mcp`: the proxy reads the token serve generated
// in the data directory, lists the tools and runs a pipeline to completion.
func TestMCPOverStdio(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	s := startServe(t, data, nil, "--mcp", "--mcp-allow-mutations")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.Command(e2e.Bin(t), "mcp", "--server", s.url(), "--data-dir", data)
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "e2e-agent", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err, stderr.String())
	defer cs.Close()

	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tool := range tools.Tools {
		names = append(names, tool.Name)
	}
	require.Contains(t, names, "run_pipeline")
	require.Contains(t, names, "get_run")

	started := callTool(ctx, t, cs, "run_pipeline", map[string]any{
		"config": "version: 1\nname: stdio\npipeline:\n  source: {type: generate, config: {count: 5}}\n  sink: {type: stdout}\n"})
	id, _ := started["run_id"].(string)
	require.NotEmpty(t, id, started)
	require.Eventually(t, func() bool {
		got := callTool(ctx, t, cs, "get_run", map[string]any{"run_id": id})
		run := got["run"].(map[string]any)
		return run["status"] == "completed" && run["trigger_kind"] == "mcp"
	}, 30*time.Second, 100*time.Millisecond)

	// A refused call reads like REST over stdio too.
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "get_run", Arguments: map[string]any{"run_id": "missing"}})
	require.NoError(t, err)
	require.True(t, res.IsError)
	require.Contains(t, res.Content[0].(*sdk.TextContent).Text, `"code":"not_found"`)

	require.NoError(t, cs.Close())
	require.True(t, slices.ContainsFunc(strings.Split(stderr.String(), "\n"),
		func(l string) bool { return strings.Contains(l, "relaying MCP") }), "the proxy logs to stderr: %s", stderr.String())
}

// TestMCPOverStdioRefusesABadToken: the proxy answers the agent's initialize with the
// server's refusal instead of leaving it waiting.
func TestMCPOverStdioRefusesABadToken(t *testing.T) {
	t.Parallel()
	s := startServe(t, t.TempDir(), nil, "--mcp")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.Command(e2e.Bin(t), "mcp", "--server", s.url(), "--token", "wrong-token", "--data-dir", "")
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	client := sdk.NewClient(&sdk.Implementation{Name: "e2e-agent", Version: "1"}, nil)
	_, err := client.Connect(ctx, &sdk.CommandTransport{Command: cmd}, nil)
	require.Error(t, err)
	require.Contains(t, err.Error(), "Unauthorized")
	require.NotContains(t, stderr.String(), "wrong-token", "the token is never logged")
}

func callTool(ctx context.Context, t *testing.T, cs *sdk.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	text := res.Content[0].(*sdk.TextContent).Text
	require.False(t, res.IsError, text)
	var out map[string]any
	require.NoError(t, json.Unmarshal([]byte(text), &out))
	return out
}

// lockedBuffer collects a child's stderr: exec copies into it from its own goroutine
// while the test reads it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A client that writes its requests and closes stdin (a pipe, a script) still gets every
// answer: the proxy ends on EOF only once the calls it relayed were answered.
func TestMCPOverStdioAnswersBeforeEOF(t *testing.T) {
	t.Parallel()
	data := t.TempDir()
	s := startServe(t, data, nil, "--mcp", "--mcp-allow-mutations")
	in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"pipe","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"validate_config","arguments":{"config":"version: 1\nname: x\npipeline: {source: {type: generate, config: {count: 1}}, sink: {type: stdout}}"}}}
{"jsonrpc":"2.0","id":3,"method":"tools/list"}
`
	r := e2e.Run(t, e2e.Cmd{Args: []string{"mcp", "--server", s.url(), "--data-dir", data}, Stdin: in})
	require.Equal(t, 0, r.Code, r.String())
	for _, id := range []string{`"id":1`, `"id":2`, `"id":3`} {
		require.Contains(t, r.Stdout, id, "every call is answered before the proxy exits:\n%s", r.String())
	}
}
