package client_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves goroutines behind (an unclosed stream).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
