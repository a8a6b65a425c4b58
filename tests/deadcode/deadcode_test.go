package deadcode_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const (
	module = "github.com/sluicehq/sluice"
	// tool is run at a pinned version with `go run`, like helm in CI: the module does
	// not depend on golang.org/x/tools.
	tool = "golang.org/x/tools/cmd/deadcode@v0.52.0"
)

// report is deadcode's -json output: one entry per package with unreachable functions.
type report []struct {
	Path  string
	Funcs []struct {
		Name     string
		Position struct {
			File string
			Line int
		}
	}
}

// TestDomainHasNoUnreachableFunction fails when the sluice binary cannot reach a function
// under domain/ (tests do not count as callers). There is no allow-list: a domain function
// production does not need is deleted with its tests, or wired into the decision it
// belongs to (ARCHITECTURE, "the domain is the one source of truth").
func TestDomainHasNoUnreachableFunction(t *testing.T) {
	t.Parallel()
	root := moduleRoot(t)
	// Loading and type-checking the whole program from source takes a minute or two, more
	// on a busy machine: stop the tool before the test binary's own deadline so a slow run
	// fails with a message instead of a timeout panic.
	ctx := context.Background()
	if deadline, ok := t.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-30*time.Second))
		defer cancel()
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, "go", "run", tool, "-json", ".")
	cmd.Dir = root
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			t.Fatalf("deadcode did not finish before the test deadline; run the package alone or with a longer -timeout")
		}
		msg := fmt.Sprintf("go run %s: %v\n%s", tool, err, stderr.String())
		if unfetchable(stderr.String()) && os.Getenv("CI") == "" {
			t.Skipf("deadcode cannot be built here (the module proxy is unreachable and the tool is not in the module cache); "+
				"run `go run %s .` where it can be fetched: %s", tool, msg)
		}
		t.Fatal(msg)
	}
	var rep report
	if err := json.Unmarshal(stdout.Bytes(), &rep); err != nil {
		t.Fatalf("deadcode -json answered something else: %v\n%s", err, stdout.String())
	}

	var dead []string
	for _, pkg := range rep {
		rel := strings.TrimPrefix(strings.TrimPrefix(pkg.Path, module), "/")
		if !strings.HasPrefix(rel, "domain/") {
			continue
		}
		for _, f := range pkg.Funcs {
			dead = append(dead, fmt.Sprintf("%s:%d: %s.%s", f.Position.File, f.Position.Line, rel, f.Name))
		}
	}
	if len(dead) > 0 {
		t.Errorf("production never reaches these domain functions: call them where the decision is made, or delete "+
			"them with their tests:\n  %s", strings.Join(dead, "\n  "))
	}
}

// unfetchable reports whether go run failed because the tool's module could not be
// downloaded, as opposed to a build or analysis failure, which must fail the test.
func unfetchable(stderr string) bool {
	for _, s := range []string{"dial tcp", "no such host", "lookup ", "connection refused", "i/o timeout",
		"module lookup disabled", "GOPROXY=off", "GOFLAGS=-mod=vendor"} {
		if strings.Contains(stderr, s) {
			return true
		}
	}
	return false
}

// moduleRoot is the directory of sluice's go.mod, found from this package's directory.
func moduleRoot(t *testing.T) string {
	t.Helper()
	out, err := exec.Command("go", "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		t.Fatal("go env GOMOD names no go.mod: run the test inside the sluice module")
	}
	return filepath.Dir(gomod)
}
