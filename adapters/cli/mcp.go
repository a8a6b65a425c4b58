package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"
)

// NewMCPCommand is `sluice mcp`: MCP over stdio for agents that start a local process,
// relayed message by message to the /mcp endpoint of a server (SPEC §11). The server
// decides the tools and runs them as the token's principal, so the proxy adds nothing
// and hides nothing. stdout carries only MCP messages; the log goes to stderr.
func NewMCPCommand(deps RunsDeps) *cobra.Command {
	f := &runsFlags{deps: deps}
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Speak MCP over stdio, relayed to a sluice server started with --mcp",
		Long: "Speak the Model Context Protocol on stdin/stdout for an AI agent, relaying every message to\n" +
			"the /mcp endpoint of --server (which runs `sluice serve --mcp`). The token comes from --token,\n" +
			"else from the file " + TokenFile + " in --data-dir. Logs go to stderr only.",
		Example: `  sluice mcp                                   # the local server of ./.sluice
  sluice mcp --data-dir /srv/sluice/.sluice
  sluice mcp --server https://sluice.example.com --token "$(cat agent.token)"
  # an agent's configuration: {"command": "sluice", "args": ["mcp", "--data-dir", "/path/to/.sluice"]}`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return f.proxyMCP(cmd) },
	}
	return cmd
}

func (f *runsFlags) proxyMCP(cmd *cobra.Command) error {
	c, err := f.client(cmd)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), nil))
	ctx, cancel := context.WithCancel(cmd.Context())
	defer cancel()
	httpClient := f.deps.HTTP
	if httpClient == nil {
		httpClient = http.DefaultClient
	}
	remote, err := (&sdk.StreamableClientTransport{
		Endpoint:             strings.TrimRight(c.BaseURL, "/") + "/mcp",
		HTTPClient:           &http.Client{Transport: bearerTransport{token: c.Token, next: httpClient.Transport}},
		DisableStandaloneSSE: true, // the server keeps no sessions, so it has nothing to push
	}).Connect(ctx)
	if err != nil {
		return fmt.Errorf("connect to %s/mcp (from %s): %w", c.BaseURL, f.conn.from, err)
	}
	defer remote.Close()
	local, err := (&sdk.IOTransport{Reader: io.NopCloser(cmd.InOrStdin()), Writer: nopWriteCloser{cmd.OutOrStdout()}}).Connect(ctx)
	if err != nil {
		return fmt.Errorf("open stdio: %w", err)
	}
	defer local.Close()
	log.Info("relaying MCP on stdio", "server", c.BaseURL)

	// The agent's side decides when the proxy ends. A server that refuses a message (a bad
	// token's 401) also ends the stream down; ending on that would exit before relayUp
	// has written the refusal, and the agent would read EOF instead of the answer.
	calls := newInflight()
	up := make(chan error, 1)
	go func() { up <- relayUp(ctx, local, remote, log, calls) }()
	down := make(chan struct{})
	go func() {
		defer close(down)
		if err := relayDown(ctx, remote, local, calls); err != nil && ctx.Err() == nil {
			log.Warn("the server's stream ended; requests are answered with its refusal", "error", err.Error())
		}
	}()
	err = <-up
	if errors.Is(err, io.EOF) {
		// The agent closed stdin (a pipe ends so): answer what it asked before leaving.
		select {
		case <-calls.drained():
		case <-down:
		case <-ctx.Done():
		}
		return nil
	}
	if errors.Is(err, context.Canceled) {
		return nil
	}
	return err
}

// inflight is the set of the agent's calls the server has not answered yet.
type inflight struct {
	mu    sync.Mutex
	ids   map[string]struct{}
	empty chan struct{} // closed while ids is empty
}

func newInflight() *inflight {
	empty := make(chan struct{})
	close(empty)
	return &inflight{ids: map[string]struct{}{}, empty: empty}
}

func callKey(id jsonrpc.ID) string { return fmt.Sprintf("%T:%v", id.Raw(), id.Raw()) }

func (f *inflight) add(id jsonrpc.ID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.ids) == 0 {
		f.empty = make(chan struct{})
	}
	f.ids[callKey(id)] = struct{}{}
}

func (f *inflight) done(id jsonrpc.ID) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.ids[callKey(id)]; !ok {
		return
	}
	delete(f.ids, callKey(id))
	if len(f.ids) == 0 {
		close(f.empty)
	}
}

// drained is closed once every call so far was answered.
func (f *inflight) drained() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.empty
}

// relayUp sends the agent's messages to the server. A request the server cannot be
// reached for is answered with a JSON-RPC error, so the agent is never left waiting.
func relayUp(ctx context.Context, local, remote sdk.Connection, log *slog.Logger, calls *inflight) error {
	for {
		msg, err := local.Read(ctx)
		if err != nil {
			return err
		}
		req, isCall := msg.(*jsonrpc.Request)
		isCall = isCall && req.IsCall()
		if isCall {
			calls.add(req.ID)
		}
		werr := remote.Write(ctx, msg)
		if werr == nil {
			continue
		}
		log.Warn("the server refused a message", "error", werr.Error())
		if isCall {
			resp := &jsonrpc.Response{ID: req.ID, Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
				Message: "sluice server: " + werr.Error()}}
			calls.done(req.ID)
			if err := local.Write(ctx, resp); err != nil {
				return err
			}
		}
	}
}

// relayDown sends the server's answers to the agent.
func relayDown(ctx context.Context, remote, local sdk.Connection, calls *inflight) error {
	for {
		msg, err := remote.Read(ctx)
		if err != nil {
			return err
		}
		if err := local.Write(ctx, msg); err != nil {
			return err
		}
		if resp, ok := msg.(*jsonrpc.Response); ok {
			calls.done(resp.ID) // after the write: the agent has its answer
		}
	}
}

// bearerTransport adds the API token to every request to the server.
type bearerTransport struct {
	token string
	next  http.RoundTripper
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	next := b.next
	if next == nil {
		next = http.DefaultTransport
	}
	return next.RoundTrip(r)
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
