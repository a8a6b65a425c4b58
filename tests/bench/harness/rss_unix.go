//go:build unix

package harness

import (
	"os"
	"runtime"
	"syscall"
)

// peakRSSKiB reads ru_maxrss of a finished child: KiB on Linux and the BSDs, bytes on
// macOS.
func peakRSSKiB(ps *os.ProcessState) int64 {
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok || ru == nil {
		return -1
	}
	if runtime.GOOS == "darwin" || runtime.GOOS == "ios" {
		return int64(ru.Maxrss) / 1024
	}
	return int64(ru.Maxrss)
}
