package harness

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Env is what one benchmark run shares between the program and its suite: where things
// are, how many rows to move, and the notes printed above the table.
type Env struct {
	// Root is the module root (the directory of go.mod).
	Root string
	// Dir is the run's temp directory, the working directory of every pipeline.
	Dir string
	// Sluice is the path of the sluice binary under test.
	Sluice string
	// Rows is how many rows every case moves.
	Rows int64
	// Keep leaves outputs in Dir after they are counted.
	Keep bool
	// Log receives progress lines (stderr), never the table.
	Log   io.Writer
	notes []string
	built map[string]string
}

// Note adds a line printed above the table (inputs, caveats).
func (e *Env) Note(format string, args ...any) {
	e.notes = append(e.notes, fmt.Sprintf(format, args...))
}

// Notes returns the notes added so far.
func (e *Env) Notes() []string { return e.notes }

// Progress writes one progress line to Log.
func (e *Env) Progress(format string, args ...any) {
	if e.Log != nil {
		fmt.Fprintf(e.Log, "sluice-bench: "+format+"\n", args...)
	}
}

// Path is name inside the run's temp directory.
func (e *Env) Path(name string) string { return filepath.Join(e.Dir, name) }

// Build compiles the package pkg (relative to the module root, e.g. "." or
// "./tests/bench/baseline/csv2jsonl") into Root/tmp/name with -trimpath, once per run,
// and returns the binary's path.
func (e *Env) Build(ctx context.Context, pkg, name string) (string, error) {
	if p, ok := e.built[pkg]; ok {
		return p, nil
	}
	out := filepath.Join(e.Root, "tmp", name)
	cmd := exec.CommandContext(ctx, "go", "build", "-trimpath", "-o", out, pkg)
	cmd.Dir = e.Root
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go build %s: %w\n%s", pkg, err, strings.TrimSpace(stderr.String()))
	}
	e.Progress("built %s in %s", out, time.Since(start).Round(time.Millisecond))
	if e.built == nil {
		e.built = map[string]string{}
	}
	e.built[pkg] = out
	return out, nil
}

// SluiceRun is `sluice run --quiet FILE` in the temp directory.
func (e *Env) SluiceRun(file string) Command {
	return Command{Argv: []string{e.Sluice, "run", "--quiet", file}, Dir: e.Dir}
}

// RemoveOutputs deletes the named files of Dir (and SQLite's -wal/-shm/-journal
// companions); files that do not exist are fine.
func (e *Env) RemoveOutputs(names ...string) error {
	for _, n := range names {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			if err := os.Remove(e.Path(n + suffix)); err != nil && !os.IsNotExist(err) {
				return fmt.Errorf("remove output: %w", err)
			}
		}
	}
	return nil
}

// ModuleRoot asks the go command for the directory of the main module's go.mod.
func ModuleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", fmt.Errorf("go env GOMOD: not inside a module; run from the sluice checkout")
	}
	return filepath.Dir(gomod), nil
}
