package execute_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every run must leave no goroutine behind: the reader stops with the run.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
