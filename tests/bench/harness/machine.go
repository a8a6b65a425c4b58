package harness

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// Machine describes where the numbers were taken.
type Machine struct {
	CPUs      int
	CPUModel  string
	OS, Arch  string
	GoVersion string
}

// String is e.g. "2 CPUs (AMD EPYC 7B13), linux/amd64, go1.26.8".
func (m Machine) String() string {
	cpu := fmt.Sprintf("%d CPUs", m.CPUs)
	if m.CPUModel != "" {
		cpu += " (" + m.CPUModel + ")"
	}
	return fmt.Sprintf("%s, %s/%s, %s", cpu, m.OS, m.Arch, m.GoVersion)
}

// ProbeMachine reads the CPU count this process may use (what nproc prints), the CPU
// model where /proc/cpuinfo has one, and the version of the go command that built the
// binaries.
func ProbeMachine(ctx context.Context) Machine {
	m := Machine{CPUs: runtime.NumCPU(), OS: runtime.GOOS, Arch: runtime.GOARCH, GoVersion: runtime.Version()}
	if out, err := exec.CommandContext(ctx, "go", "env", "GOVERSION").Output(); err == nil {
		if v := strings.TrimSpace(string(out)); v != "" {
			m.GoVersion = v
		}
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close()
		m.CPUModel = cpuModel(bufio.NewScanner(f))
	}
	return m
}

func cpuModel(s *bufio.Scanner) string {
	for s.Scan() {
		key, val, ok := strings.Cut(s.Text(), ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.Join(strings.Fields(val), " ")
		}
	}
	return ""
}
