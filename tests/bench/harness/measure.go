package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
	"time"
)

// Command is one child process to time.
type Command struct {
	Argv []string
	Dir  string
}

// Sample is what one timed run measured.
type Sample struct {
	Wall time.Duration
	// PeakRSSKiB is the child's maximum resident set size in KiB; -1 where the platform
	// does not report it.
	PeakRSSKiB int64
}

// stderrTail bounds how much of a failed child's output goes into the error.
const stderrTail = 2048

// Measure runs c to completion as its own process, so the peak RSS is that process's
// alone, and returns its wall time (start to exit, as a user would see it). A non-zero
// exit is an error carrying the tail of the child's output.
func Measure(ctx context.Context, c Command) (Sample, error) {
	if len(c.Argv) == 0 {
		return Sample{}, errors.New("measure: empty command")
	}
	cmd := exec.CommandContext(ctx, c.Argv[0], c.Argv[1:]...)
	cmd.Dir = c.Dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	start := time.Now()
	err := cmd.Start()
	hwm := func() int64 { return -1 }
	if err == nil {
		hwm = watchHWM(cmd.Process.Pid)
		err = cmd.Wait()
	}
	wall := time.Since(start)
	peak := hwm()
	if err != nil {
		return Sample{}, fmt.Errorf("%s: %w%s", strings.Join(c.Argv, " "), err, tail(out.String()))
	}
	if peak < 0 {
		peak = peakRSSKiB(cmd.ProcessState)
	}
	return Sample{Wall: wall, PeakRSSKiB: peak}, nil
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	if len(s) > stderrTail {
		s = "…" + s[len(s)-stderrTail:]
	}
	return "\n" + s
}
