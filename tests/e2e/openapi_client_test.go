package e2e_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// oapiCodegen is the generator a client author would use; it runs as a tool (go run), never
// as a dependency of sluice's module.
const (
	oapiCodegen = "github.com/oapi-codegen/oapi-codegen/v2/cmd/oapi-codegen@v2.8.2"
	oapiRuntime = "github.com/oapi-codegen/runtime@v1.9.0"
)

// generatedClientMain drives a run through the generated client: submitRun, then getRun
// until the run ended. It is a client program, so it polls as any client would.
const generatedClientMain = `package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"
)

func fail(err error) { fmt.Fprintln(os.Stderr, err); os.Exit(1) }

func main() {
	ctx := context.Background()
	c, err := NewClientWithResponses(os.Getenv("SLUICE_URL"), WithRequestEditorFn(func(_ context.Context, r *http.Request) error {
		r.Header.Set("Authorization", "Bearer "+os.Getenv("SLUICE_TOKEN"))
		return nil
	}))
	if err != nil {
		fail(err)
	}
	var cfg SubmitRequest_Config
	if err := cfg.FromSubmitRequestConfig0(os.Getenv("SLUICE_CONFIG")); err != nil {
		fail(err)
	}
	sub, err := c.SubmitRunWithResponse(ctx, &SubmitRunParams{}, SubmitRunJSONRequestBody{Config: cfg})
	if err != nil {
		fail(err)
	}
	if sub.JSON202 == nil || sub.JSON202.RunId == nil {
		fail(fmt.Errorf("submitRun answered %d: %s", sub.StatusCode(), sub.Body))
	}
	id := *sub.JSON202.RunId
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		got, err := c.GetRunWithResponse(ctx, id)
		if err != nil {
			fail(err)
		}
		if got.JSON200 == nil {
			fail(fmt.Errorf("getRun answered %d: %s", got.StatusCode(), got.Body))
		}
		switch got.JSON200.Status {
		case RunStatusCompleted, RunStatusFailed, RunStatusCancelled:
			fmt.Println(got.JSON200.Status, got.JSON200.Stats.RowsWritten)
			return
		}
	}
	fail(fmt.Errorf("run %s did not end within a minute", id))
}
`

// TestGeneratedClientDrivesARun: a Go client generated with oapi-codegen from the served
// document (fetched without a token) compiles, names its methods by operationId, and
// drives a run to completion.
func TestGeneratedClientDrivesARun(t *testing.T) {
	t.Parallel()
	goBin, err := exec.LookPath("go")
	require.NoError(t, err, "the go command generates and builds the client")
	dir := t.TempDir()
	s := startServe(t, filepath.Join(dir, "data"), nil, "--history", "memory")

	resp, err := http.Get(s.url() + "/v1/openapi.json")
	require.NoError(t, err)
	doc, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode, "the document is served without a token")
	// Generating and building the client can take minutes on a busy machine, longer than
	// a test server lives: the run goes to a server started once the client is built.
	s.stop(t)

	client := filepath.Join(dir, "client")
	require.NoError(t, os.MkdirAll(client, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(client, "openapi.json"), doc, 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(client, "main.go"), []byte(generatedClientMain), 0o600))
	require.NoError(t, os.WriteFile(filepath.Join(client, "go.mod"), []byte("module generated\n\ngo 1.26.0\n"), 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	goCmd := func(env []string, args ...string) string {
		cmd := exec.CommandContext(ctx, goBin, args...)
		cmd.Dir = client
		cmd.Env = append(os.Environ(), env...)
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "go %s:\n%s", strings.Join(args, " "), out)
		return string(out)
	}
	goCmd(nil, "run", oapiCodegen, "-generate", "types,client", "-package", "main", "-o", "client.gen.go", "openapi.json")
	gen, err := os.ReadFile(filepath.Join(client, "client.gen.go"))
	require.NoError(t, err)
	for _, method := range []string{"SubmitRunWithResponse", "ListRunsWithResponse", "RunTemplateWithResponse",
		"FanOutTemplateWithResponse", "ApproveChangeRequestWithResponse"} {
		require.Contains(t, string(gen), ") "+method+"(", "methods are named from operationIds")
	}
	goCmd(nil, "get", oapiRuntime)
	goCmd(nil, "mod", "tidy")
	goCmd(nil, "build", "-o", "generated-client", ".")
	s = startServe(t, filepath.Join(dir, "data2"), nil, "--history", "memory")
	run := exec.CommandContext(ctx, filepath.Join(client, "generated-client"))
	run.Env = append(os.Environ(), "SLUICE_URL="+s.url(), "SLUICE_TOKEN="+s.token,
		"SLUICE_CONFIG="+generateConfig("generated", filepath.Join(dir, "out.db"), 25, 0, 10, ""))
	out, err := run.CombinedOutput()
	require.NoError(t, err, "the generated client:\n%s", out)
	require.Equal(t, "completed 25\n", string(out))
}
