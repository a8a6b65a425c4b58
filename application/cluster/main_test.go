package cluster_test

import (
	"testing"

	"go.uber.org/goleak"
)

// A stopped member leaves no goroutine behind: loops, workers and log flushers end.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
