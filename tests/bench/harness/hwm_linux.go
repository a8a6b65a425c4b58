package harness

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// hwmEvery is how often a child's high-water mark is read.
const hwmEvery = 10 * time.Millisecond

// watchHWM follows a child's VmHWM (the peak resident set of its own address space) until
// stop is called, and stop returns the highest value read, in KiB (-1: never read).
//
// Why not ru_maxrss alone: Go starts children with vfork semantics, and at exec Linux
// folds the high-water mark of the address space the child shared with its parent into
// the child's ru_maxrss. A benchmark process that holds a large in-process server (kfake,
// gofakes3) then reports its own size as every child's peak. VmHWM belongs to the
// child's new address space only; being a high-water mark, polling misses at most the
// growth of the child's last few milliseconds.
func watchHWM(pid int) (stop func() int64) {
	done := make(chan struct{})
	result := make(chan int64, 1)
	path := fmt.Sprintf("/proc/%d/status", pid)
	go func() {
		peak := int64(-1)
		t := time.NewTicker(hwmEvery)
		defer t.Stop()
		for {
			if v, ok := readHWM(path); ok && v > peak {
				peak = v
			}
			select {
			case <-done:
				result <- peak
				return
			case <-t.C:
			}
		}
	}()
	return func() int64 {
		close(done)
		return <-result
	}
}

// readHWM reads the VmHWM line of a /proc status file (KiB).
func readHWM(path string) (int64, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	i := bytes.Index(b, []byte("VmHWM:"))
	if i < 0 {
		return 0, false // a zombie has no address space left
	}
	line := b[i+len("VmHWM:"):]
	if j := bytes.IndexByte(line, '\n'); j >= 0 {
		line = line[:j]
	}
	line = bytes.TrimSpace(bytes.TrimSuffix(bytes.TrimSpace(line), []byte("kB")))
	v, err := strconv.ParseInt(string(line), 10, 64)
	return v, err == nil
}
