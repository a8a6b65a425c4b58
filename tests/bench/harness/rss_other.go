//go:build !unix

package harness

import "os"

// peakRSSKiB is unknown off Unix: the table shows it as missing.
func peakRSSKiB(*os.ProcessState) int64 { return -1 }
