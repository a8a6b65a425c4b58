package http_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind (a followed log stream
// that never ends, a forgotten server).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
